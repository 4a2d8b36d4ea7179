import { startTestApp, type TestApp } from './test-app.js';

/** A second API process: the test app without its projection runner, on `first`'s DATA_DIR. */
export type SecondApi = TestApp;

/**
 * Another API process (ROLE=api: no projection runner) on the same DATA_DIR as `first`, with its
 * own store connections, as a second process on the machine would have. Closing it leaves the
 * DATA_DIR to `first`.
 */
export function startSecondApi(first: TestApp, env: Record<string, string> = {}): Promise<SecondApi> {
  return startTestApp({ DATA_DIR: first.dataDir, ROLE: 'api', ...env }, { runner: false });
}
