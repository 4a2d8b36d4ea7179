import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { SqliteEventStore } from '../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { silentLogger } from '../../src/platform/logging/logger.js';
import { ProjectionRunner } from '../../src/platform/projections/projection-runner.js';
import { ViewReader } from '../../src/platform/projections/views.js';
import { SqliteReadStore } from '../../src/platform/read-store/sqlite/sqlite-read-store.js';
import { childEnv } from '../support/child-process.js';
import { makeTempDir, transpileForChildProcess } from '../support/event-store-fixtures.js';
import { countingProjection } from '../support/fixtures/counting-projection.js';

const STREAMS = 40;
const EVENTS = 20_000;

async function fillLog(store: SqliteEventStore): Promise<Map<string, { count: number; sum: number }>> {
  const expected = new Map<string, { count: number; sum: number }>();
  for (let start = 0; start < EVENTS; start += 100) {
    const streamId = `counted-${(start / 100) % STREAMS}`;
    const batch = Array.from({ length: 100 }, (_, i) => ({ type: 'Counted', data: { amount: (start + i) % 7 } }));
    await store.append(streamId, batch, { expectedRevision: 'any' });
    const total = expected.get(streamId) ?? { count: 0, sum: 0 };
    expected.set(streamId, { count: total.count + 100, sum: total.sum + batch.reduce((s, e) => s + e.data.amount, 0) });
  }
  return expected;
}

/** Starts the projector process; resolves with its exit once it printed `killAfter` batches (then SIGKILL) or finished. */
function runProjector(script: string, dataDir: string, killAfterBatches: number | null): Promise<{ killed: boolean; batches: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, dataDir], { env: childEnv() });
    let batches = 0;
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.stdout.on('data', (chunk: Buffer) => {
      batches += chunk.toString().split('\n').filter((line) => line.startsWith('applied')).length;
      // Kill a little after a commit: the next batch is being applied, not yet committed.
      if (killAfterBatches !== null && batches >= killAfterBatches && !child.killed) setTimeout(() => child.kill('SIGKILL'), 3);
    });
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve({ killed: true, batches });
      else if (code === 0) resolve({ killed: false, batches });
      else reject(new Error(`projector exited ${code}: ${stderr}`));
    });
  });
}

describe('projection runner crash safety', () => {
  it('a projector killed with SIGKILL mid-batch, then restarted, ends with views identical to a clean rebuild', async () => {
    const dir = makeTempDir('projection-crash-');
    const compiled = makeTempDir('projection-crash-js-');
    try {
      const events = new SqliteEventStore(join(dir.path, 'events.sqlite'));
      const expected = await fillLog(events);
      await transpileForChildProcess(['test/support/fixtures/projector-process.ts'], compiled.path);
      const script = join(compiled.path, 'test/support/fixtures/projector-process.js');

      const crashed = await runProjector(script, dir.path, 5);
      expect(crashed.killed).toBe(true);
      const views = new SqliteReadStore(join(dir.path, 'views.sqlite'));
      const reader = new ViewReader(views, 0);
      const positionAfterCrash = await reader.position('counting');
      expect(positionAfterCrash).toBeLessThan((await events.headPosition())!);

      const finished = await runProjector(script, dir.path, null);
      expect(finished.killed).toBe(false);

      const live = await reader.find('counting', 'counters', { sort: [['id', 'asc']] });
      expect(Object.fromEntries(live.map((doc) => [doc.id, { count: doc.count, sum: doc.sum }]))).toEqual(Object.fromEntries(expected));
      expect(await reader.count('counting', 'seen')).toBe(EVENTS);

      const rebuilder = new ProjectionRunner(events, views, [countingProjection], { owner: 'test', logger: silentLogger, dropDelayMs: 0 });
      await rebuilder.rebuild('counting');
      const rebuilt = await new ViewReader(views, 0).find('counting', 'counters', { sort: [['id', 'asc']] });
      expect(rebuilt).toEqual(live);
      await rebuilder.stop();
      await views.close();
      await events.close();
    } finally {
      dir.remove();
      compiled.remove();
    }
  }, 120_000);
});
