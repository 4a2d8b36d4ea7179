/**
 * `npm run retention -- status | apply` as an operator runs it: a child process on the data
 * directory of a service (stopped in between), from the build `npm run` uses (built first when
 * a source changed, as `npm run retention` does).
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROLLUPS_PROJECTION } from '../../src/analytics/views/rollups/view.js';
import { ANALYTICS_ENDPOINTS_PROJECTION } from '../../src/analytics/views/endpoints/view.js';
import { createEndpoint, createProject, importChecks } from '../support/monitoring-fixtures.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/test-app.js';
import { makeTempDir } from '../support/event-store-fixtures.js';
import { runCommand } from '../support/child-process.js';
import { builtCli, ensureBuilt } from '../support/built-service.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

const run = (command: string, args: string[], env: Record<string, string>) => runCommand(command, args, { env });

describe('npm run retention', () => {
  const dir = makeTempDir('retention-cli-');
  const env = { DATA_DIR: dir.path, ADMIN_TOKEN, CHECK_RETENTION_DAYS: '30', LOG_LEVEL: 'silent' };
  const cli = (args: string[]) => run(process.execPath, [builtCli('retention'), ...args], env);
  let t: TestApp;

  afterAll(async () => {
    await t?.close();
    dir.remove();
  });

  beforeAll(() => ensureBuilt(), 180_000);

  it('status says what the next pass removes; apply removes it, exits 0, and the check route answers 404', async () => {
    t = await startTestApp({ ROLE: 'api', DATA_DIR: dir.path, CHECK_RETENTION_DAYS: '30' });
    const teamId = (await t.createTeam('Ops')).id;
    const token = (await t.issueToken(teamId, ['monitoring:read'], 'viewer')).token;
    const endpointId = (await createEndpoint(t, teamId, (await createProject(t, teamId)).id)).id;
    const now = Date.now();
    // 80 checks an hour apart 40 days ago, ten in the last ten days: the pass removes the old ones
    // through revision 63, just before the anchor at 64 (docs/audit.md).
    const checks = [
      ...Array.from({ length: 80 }, (_, i) => ({ checked_at: iso(now - 40 * DAY + i * HOUR), success: true, status_code: 200, latency_ms: 100 + i })),
      ...Array.from({ length: 10 }, (_, i) => ({ checked_at: iso(now - 10 * DAY + i * DAY), success: true, status_code: 200, latency_ms: 200 + i })),
    ];
    await importChecks(t, teamId, endpointId, checks);
    const oldest = JSON.parse((await t.request('GET', `/api/public/v2/endpoints/${endpointId}/checks?limit=100`, { token })).body).data.at(-1);
    await t.close();

    const status = await cli(['status']);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`Oldest retained check: ${oldest.checked_at}`);
    const removable = Number(/removes (\d+) check\(s\)/.exec(status.stdout)?.[1]);
    expect(removable).toBe(64);
    expect(status.stdout).toMatch(/event log\s*│?\s*[\d.]+ (KB|MB)/);

    const apply = await cli(['apply']);
    expect(apply).toMatchObject({ code: 0 });
    expect(apply.stdout).toContain(`${removable} checks removed from the log`);
    expect((await cli(['status'])).stdout).toContain('The next pass removes 0 check(s)');

    t = await startTestApp({ ROLE: 'api', DATA_DIR: dir.path, CHECK_RETENTION_DAYS: '30' });
    expect((await t.request('GET', `/api/public/v2/endpoints/${endpointId}/checks/${oldest.id}`, { token })).statusCode).toBe(404);

    expect((await cli(['apply', '--now', 'yesterday'])).code).toBe(1);
    // Shapes Date.parse would take (rolling February 30 over to March 2) are refused as well.
    for (const now of ['2026-02-30T00:00:00Z', '2026-01-01']) {
      const refused = await cli(['status', '--now', now]);
      expect({ now, code: refused.code, stderr: refused.stderr }).toEqual({ now, code: 1, stderr: expect.stringContaining('--now must be an RFC 3339 time') });
    }
  }, 240_000);

  it('apply gives the disk back: when 3/4 of the checks leave, the data directory shrinks in step, views included', async () => {
    const data = makeTempDir('retention-cli-space-');
    const dataEnv = { ...env, DATA_DIR: data.path, CHECK_RETENTION_DAYS: '10' };
    const bytes = (base: string) => readdirSync(data.path).filter((f) => f.startsWith(base)).reduce((sum, f) => sum + statSync(join(data.path, f)).size, 0);
    let service: TestApp | null = await startTestApp({ ROLE: 'api', DATA_DIR: data.path, CHECK_RETENTION_DAYS: '10' });
    try {
      const s = service;
      const teamId = (await s.createTeam('Disk')).id;
      const endpointId = (await createEndpoint(s, teamId, (await createProject(s, teamId)).id)).id;
      // 20,000 checks over 40 days, 10 of them retained: the 30 oldest days (3/4) leave.
      const start = Date.now() - 40 * DAY;
      const step = (40 * DAY) / 20_000;
      for (let batch = 0; batch < 4; batch++) {
        const checks = Array.from({ length: 5_000 }, (_, i) => ({ checked_at: iso(start + (batch * 5_000 + i) * step), success: i % 7 !== 0, status_code: 200, latency_ms: 100 + (i % 50) }));
        const response = await s.admin('POST', `/api/v2/teams/${teamId}/endpoints/${endpointId}/checks/import`, { checks });
        // 202 views_behind on a loaded machine: recorded, the views follow.
        expect([201, 202]).toContain(response.statusCode);
      }
      const head = await s.platform.events.headPosition();
      const deadline = Date.now() + 180_000;
      while (!(await s.platform.freshness.waitFor(head!, [ROLLUPS_PROJECTION, ANALYTICS_ENDPOINTS_PROJECTION]))) {
        if (Date.now() > deadline) throw new Error('the views did not catch up with the import');
      }
      await s.close();
      service = null;
      const before = { views: bytes('views.sqlite'), all: bytes('') };

      const apply = await run(process.execPath, [builtCli('retention'), 'apply'], dataEnv);
      expect(apply).toMatchObject({ code: 0 });
      const removed = Number(/(\d+) checks removed from the log/.exec(apply.stdout)?.[1]);
      expect(removed / 20_000).toBeGreaterThan(0.7);
      const after = { views: bytes('views.sqlite'), all: bytes('') };
      // What stays is a quarter of the checks plus rollups and summaries.
      expect(after.views / before.views).toBeLessThan(0.5);
      expect(after.all / before.all).toBeLessThan(0.5);
    } finally {
      await service?.close();
      data.remove();
    }
  }, 240_000);
});
