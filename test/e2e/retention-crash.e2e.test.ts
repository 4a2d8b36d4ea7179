/**
 * Retention across processes: a pruner in its own process holds the retention lease (another
 * cannot prune meanwhile), and a pruner SIGKILLed between appending a summary and removing the
 * checks it stands for leaves a log from which the views, the next pass and a full rebuild all
 * come out the same: nothing counted twice, nothing lost.
 */
import { isReactor } from '../../src/platform/projections/projection.js';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { CHECK_RECORDED, type CheckRecordedData } from '../../src/checks/domain/check.js';
import { CHECKS_SUMMARIZED, checkSummariesStream, type ChecksSummarizedData } from '../../src/checks/domain/check-summary.js';
import { checksStream } from '../../src/checks/domain/check.js';
import { CheckRetention, RetentionBusyError } from '../../src/checks/application/retention.js';
import { SqliteCoordinationStore } from '../../src/platform/coordination/sqlite/sqlite-coordination-store.js';
import { childEnv } from '../support/child-process.js';
import { makeTempDir, transpileForChildProcess } from '../support/event-store-fixtures.js';
import { createEndpoint, createProject, importChecks } from '../support/monitoring-fixtures.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

const FIXTURE = 'test/support/fixtures/pruner-process.ts';
const DAY = 86_400_000;
const MIN = 60_000;
const DAYS = 30;
const VIEWS = ['analytics_rollups', 'analytics_endpoints'];
const LEASE_MS = 4000;
const iso = (ms: number) => new Date(ms).toISOString();
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts the pruner; resolves once it printed `until` (or exited), with how it ended. */
function startPruner(script: string, dataDir: string, now: number, args: string[]) {
  const child = spawn(process.execPath, [script, dataDir, String(now), ...args], {
    env: childEnv({ CHECK_RETENTION_DAYS: String(DAYS), PRUNER_LEASE_MS: String(LEASE_MS) }),
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  const printed = (text: string) =>
    new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        stdout += chunk;
        if (stdout.includes(text)) resolve();
      });
      void exited.then((end) => (stdout.includes(text) ? resolve() : reject(new Error(`pruner ended (${end.code ?? end.signal}) before "${text}": ${end.stderr}`))));
    });
  return { child, exited, printed };
}

describe('check retention in separate processes', () => {
  const dir = makeTempDir('retention-crash-');
  const compiled = makeTempDir('retention-crash-js-');
  const now = Date.now();
  let t: TestApp;
  let script: string;
  let teamId: number;
  let token: string;
  const endpoints: number[] = [];

  const start = () => startTestApp({ ROLE: 'api', DATA_DIR: dir.path, CHECK_RETENTION_DAYS: String(DAYS) });
  const settled = async () => {
    const head = await t.platform.events.headPosition();
    if (head !== null && !(await t.platform.freshness.waitFor(head, VIEWS))) throw new Error('views did not catch up');
  };
  const figures = async () => {
    const out: unknown[] = [];
    const q = `from=${encodeURIComponent(iso(now - 44 * DAY + 777))}&to=${encodeURIComponent(iso(now))}&buckets=44`;
    for (const path of ['/api/public/v2/analytics', ...endpoints.map((id) => `/api/public/v2/endpoints/${id}/analytics`)]) {
      const response = await t.request('GET', `${path}?${q}`, { token });
      expect(response.statusCode).toBe(200);
      out.push(response.json().data);
    }
    return out;
  };

  beforeAll(async () => {
    await transpileForChildProcess([FIXTURE], compiled.path);
    script = join(compiled.path, FIXTURE.replace(/\.ts$/, '.js'));
    t = await start();
    teamId = (await t.createTeam('Crash')).id;
    token = (await t.issueToken(teamId, ['monitoring:read', 'analytics:read'], 'viewer')).token;
    const projectId = (await createProject(t, teamId, 'P')).id;
    for (const name of ['a', 'b']) {
      const endpointId = (await createEndpoint(t, teamId, projectId, { name })).id;
      endpoints.push(endpointId);
      const checks = [];
      for (let at = now - 45 * DAY + endpointId * 1000, n = 0; at < now - MIN; at += 37 * MIN, n++) {
        checks.push({ checked_at: iso(at), success: n % 7 !== 0, status_code: n % 7 === 0 ? 500 : 200, latency_ms: 20 + ((n * 53) % 300) });
      }
      await importChecks(t, teamId, endpointId, checks);
    }
    await settled();
  }, 180_000); // thousands of imported checks and their views: minutes on a loaded 2-core machine

  afterAll(async () => {
    await t?.close();
    dir.remove();
    compiled.remove();
  });

  it('keeps a second pruner out while one holds the lease, and a SIGKILL between summary and removal loses and doubles nothing', async () => {
    const before = await figures();
    const allIds = new Map<number, number[]>();
    for (const id of endpoints) {
      allIds.set(id, (await t.platform.events.readStream(checksStream(id))).filter((e) => e.type === CHECK_RECORDED).map((e) => (e.data as CheckRecordedData).check_id));
    }
    await t.close();

    // 1. The lease: a pruner paused after its second summary holds it; this process is refused.
    const paused = startPruner(script, dir.path, now, ['pause-after-summary', '2']);
    await paused.printed('paused');
    const coordination = new SqliteCoordinationStore(join(dir.path, 'coordination.sqlite'));
    t = await start();
    const retention = new CheckRetention(t.platform.events, { days: DAYS, maxChecksPerSummary: 200 });
    await expect(retention.apply(now, { coordination, owner: 'parent' })).rejects.toBeInstanceOf(RetentionBusyError);
    paused.child.kill('SIGKILL');
    await paused.exited;

    // 2. A pruner that dies right after appending its first summary (its lease lapses first).
    await pause(LEASE_MS + 500);
    const killed = startPruner(script, dir.path, now, ['kill-after-summary', '1']);
    expect((await killed.exited).signal).toBe('SIGKILL');
    const summaries = async (id: number) => (await t.platform.events.readStream(checkSummariesStream(id))).map((e) => e.data as ChecksSummarizedData);
    // Some endpoint's log holds a summary and the raw checks it stands for, both.
    let covered = 0;
    for (const id of endpoints) {
      const last = (await summaries(id)).at(-1);
      if (!last) continue;
      covered += (await t.platform.events.readStream(checksStream(id))).filter((e) => e.type === CHECK_RECORDED && e.revision <= last.through_revision).length;
    }
    expect(covered).toBeGreaterThan(0);

    // The views apply a log holding both the summary and the raw checks it stands for.
    await settled();
    expect(await figures()).toEqual(before);

    // 3. The next pass finishes the job once the dead pruner's lease lapsed.
    await pause(LEASE_MS + 500);
    const result = await retention.apply(now, { coordination, owner: 'parent' });
    expect(result.removed).toBeGreaterThan(0);
    await settled();
    expect(await figures()).toEqual(before);
    for (const id of endpoints) {
      const summarized = (await summaries(id)).flatMap((s) => s.check_ids);
      const retained = (await t.platform.events.readStream(checksStream(id))).filter((e) => e.type === CHECK_RECORDED).map((e) => (e.data as CheckRecordedData).check_id);
      expect(new Set(summarized).size).toBe(summarized.length);
      expect([...summarized, ...retained].sort((a, b) => a - b)).toEqual([...allIds.get(id)!].sort((a, b) => a - b));
      expect((await t.platform.events.readStream(checkSummariesStream(id))).every((e) => e.type === CHECKS_SUMMARIZED)).toBe(true);
    }
    for (const projection of t.platform.runner!.projections.filter((p) => !isReactor(p))) await t.platform.runner!.rebuild(projection.name);
    await settled();
    expect(await figures()).toEqual(before);
    await coordination.close();
  }, 120_000); // two lease periods, three passes and a rebuild of every view: over 30 s on a loaded 2-core machine
});
