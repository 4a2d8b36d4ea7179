/**
 * .ci/e2e.mjs, the end-to-end script the workflow runs against the compose topology, run here
 * against the built service started as an operator starts it (`npm start`): it drives a team,
 * an endpoint on its own target, checks, an outage and its incident through HTTP only, and
 * says which step failed when one does.
 */
import { join } from 'node:path';
import { PROJECT_ROOT, runNode } from '../support/child-process.js';
import { makeTempDir } from '../support/event-store-fixtures.js';
import { buildService, startService, type ServiceProcess } from '../support/service-process.js';

const ADMIN = 'e2e-script-admin-token-0123456789';
const SCRIPT = join(PROJECT_ROOT, '.ci/e2e.mjs');

describe('.ci/e2e.mjs against a service started like npm start', () => {
  const dir = makeTempDir('e2e-script-');
  let service: ServiceProcess;
  beforeAll(async () => {
    service = await startService(await buildService('e2e-script'), { DATA_DIR: dir.path, ADMIN_TOKEN: ADMIN, ROLE: 'all' });
  }, 180_000);
  afterAll(async () => {
    await service?.kill('SIGTERM');
    dir.remove();
  });

  it('passes every step: checks recorded, an outage opens an incident, it resolves and checks go on', async () => {
    const result = await runNode(SCRIPT, ['--api', service.url, '--step-timeout', '120'], { env: { ADMIN_TOKEN: ADMIN } });
    expect([result.code, result.stderr]).toEqual([0, '']);
    for (const step of ['checks recorded', 'outage: incident', 'the views went on', 'PASSED']) expect(result.stdout).toContain(step);
  }, 300_000);

  it('exits 1 naming the step that failed (a wrong admin token)', async () => {
    const result = await runNode(SCRIPT, ['--api', service.url], { env: { ADMIN_TOKEN: 'not-the-admin-token-0123456789' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('FAILED at "create a team"');
    expect(result.stderr).toContain('answered 401');
  }, 60_000);
});
