/**
 * Child processes get only what a test gives them (test/support/child-process.ts). The CI job
 * for the distributed adapters sets EVENTSTORE_URL, MONGODB_URL and NATS_URL for the whole test
 * run; a service or CLI child that inherited them without CURSOR_SIGNING_KEY refused to start
 * (exit 78), and one that started would have used the CI's stores instead of its own data dir.
 */
import { childEnv, runNode } from '../support/child-process.js';
import { makeTempDir } from '../support/event-store-fixtures.js';
import { buildService, startService } from '../support/service-process.js';

const STORE_URLS = {
  EVENTSTORE_URL: 'esdb://127.0.0.1:1?tls=false',
  MONGODB_URL: 'mongodb://127.0.0.1:1/unreachable?replicaSet=rs0&directConnection=true',
  NATS_URL: 'nats://127.0.0.1:1',
};

describe('child processes started by tests', () => {
  const saved = Object.fromEntries(Object.keys(STORE_URLS).map((name) => [name, process.env[name]]));
  beforeAll(() => Object.assign(process.env, STORE_URLS, { DATA_DIR: '/nonexistent', ADMIN_TOKEN: 'from-the-test-process' }));
  afterAll(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    delete process.env.DATA_DIR;
    delete process.env.ADMIN_TOKEN;
  });

  it('see no store URL or service setting of the test process, only what the test passes', async () => {
    const printed = await runNode('-e', ['process.stdout.write(JSON.stringify(process.env))'], { env: { LOG_LEVEL: 'silent', PATH: undefined } });
    const env = JSON.parse(printed.stdout);
    for (const name of [...Object.keys(STORE_URLS), 'DATA_DIR', 'ADMIN_TOKEN', 'PATH']) expect([name, env[name]]).toEqual([name, undefined]);
    expect(env.LOG_LEVEL).toBe('silent');
    expect(childEnv({ NATS_URL: 'nats://given:4222' }).NATS_URL).toBe('nats://given:4222');
  });

  it('the built service starts on its own data dir while the test process has store URLs set', async () => {
    const dir = makeTempDir('child-env-');
    const service = await startService(await buildService('child-env'), { DATA_DIR: dir.path, ADMIN_TOKEN: 'child-env-admin-token-0123456789' });
    try {
      await service.ready();
    } finally {
      await service.kill('SIGTERM');
      dir.remove();
    }
  }, 180_000);
});
