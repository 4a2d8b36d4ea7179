import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteEventStore } from '../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { turnsDuring } from '../support/event-loop-turns.js';

/**
 * Retention removes events, then gives their pages back (`reclaimSpace`). Over SQLite that is
 * synchronous: one `incremental_vacuum` of every free page held the event loop (probes,
 * requests, projection commits) for as long as it took. It frees a slice of pages at a time,
 * with a turn of the loop between two.
 */
describe('SQLite event log: reclaimSpace lets the event loop run', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'event-log-reclaim-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('frees every page removed events held, in slices, with other tasks running between them', async () => {
    const file = join(dir, 'events.sqlite');
    const events = new SqliteEventStore(file);
    // Another connection (SQLite's own), which sees what each slice committed.
    const raw = new Database(file, { readonly: true });
    const freePages = () => raw.pragma('freelist_count', { simple: true }) as number;
    try {
      // About 6 MB of events (1,500 pages and more), then all of them removed.
      const padding = 'x'.repeat(2_000);
      for (let i = 0; i < 30; i++) {
        await events.append('big-1', Array.from({ length: 100 }, (_, j) => ({ type: 'Big', data: { i, j, padding } })), { expectedRevision: 'any' });
      }
      expect((await events.removeEvents('big-1', { throughRevision: 2_999, types: ['Big'] })).removed).toBe(3_000);
      const before = freePages();
      expect(before).toBeGreaterThan(1_000);

      const { seen } = await turnsDuring(() => events.reclaimSpace(), freePages);
      expect(freePages()).toBe(0);
      // Before: no turn until every page was freed. Now: turns between slices, each seeing fewer free pages.
      expect(seen.length).toBeGreaterThan(1);
      expect(seen.some((free) => free > 0 && free < before)).toBe(true);
      // The log still takes appends and reads after it.
      await events.append('big-1', [{ type: 'Big', data: { after: true } }], { expectedRevision: 'any' });
      expect((await events.readAll({ maxCount: 10 })).map((e) => e.data)).toEqual([{ after: true }]);
    } finally {
      raw.close();
      await events.close();
    }
  });
});
