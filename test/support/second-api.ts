import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createHttpApp } from '../../src/app/http-app.js';
import { projections, upcasters } from '../../src/app/contexts.js';
import { loadConfig } from '../../src/platform/config/config.js';
import { silentLogger } from '../../src/platform/logging/logger.js';
import { createPlatform } from '../../src/platform/platform.js';
import { ADMIN_TOKEN, type InjectResponse, type RequestOptions, type TestApp } from './test-app.js';

export interface SecondApi {
  request(method: string, url: string, options?: RequestOptions): Promise<InjectResponse>;
  close(): Promise<void>;
}

/**
 * Another API process (ROLE=api: no projection runner) on the same DATA_DIR as `first`, with its
 * own store connections, as a second process on the machine would have.
 */
export async function startSecondApi(first: TestApp, env: Record<string, string> = {}): Promise<SecondApi> {
  const config = loadConfig({ DATA_DIR: first.dataDir, ADMIN_TOKEN, LOG_LEVEL: 'silent', ROLE: 'api', ...env });
  const platform = await createPlatform(config, { projections: projections(), upcasters: upcasters(), withRunner: false, withTransport: true, logger: silentLogger });
  const app: NestFastifyApplication = await createHttpApp(platform);
  await app.getHttpAdapter().getInstance().ready();
  return {
    async request(method, url, options = {}) {
      const headers: Record<string, string> = { ...(options.headers ?? {}) };
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
      if (payload !== undefined) headers['content-type'] ??= 'application/json';
      const response = await app.inject({ method: method as any, url, headers, payload, query: options.query });
      return { statusCode: response.statusCode, headers: response.headers, body: response.body, json: () => JSON.parse(response.body) };
    },
    async close() {
      await app.close();
      await platform.close();
    },
  };
}
