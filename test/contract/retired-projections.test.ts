/**
 * A projection that left the catalogue (monitoring's checks view, whose rows are analytics' raw
 * rows since rollups v9) leaves its tables, pointer and checkpoints in a database an earlier
 * version wrote. The runner drops them with the stale generations (what the hourly retention
 * pass and `retention apply` call), and nothing of the projections still in the catalogue.
 */
import { join } from 'node:path';
import { projections, retiredProjections } from '../../src/app/contexts.js';
import { SqliteEventStore } from '../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { silentLogger } from '../../src/platform/logging/logger.js';
import { defineProjection } from '../../src/platform/projections/projection.js';
import { ProjectionRunner } from '../../src/platform/projections/projection-runner.js';
import { ProjectionRegistry } from '../../src/platform/projections/registry.js';
import { SqliteReadStore } from '../../src/platform/read-store/sqlite/sqlite-read-store.js';
import { makeTempDir } from '../support/event-store-fixtures.js';

/** The checks view as an earlier version kept it (one row per check, its list index). */
const oldChecksView = defineProjection({
  name: 'checks',
  version: 7,
  collections: [{ name: 'checks', indexes: [{ fields: ['endpoint_id', 'checked_at'] }] }],
  handlers: {
    CheckRecorded: (event, views) => {
      const data = event.data as { check_id: number; endpoint_id: number; checked_at: string };
      views.put('checks', { id: String(data.check_id), endpoint_id: data.endpoint_id, checked_at: data.checked_at });
    },
  },
});

describe('retired projections', () => {
  it('drops the tables, pointer and checkpoints an earlier version left for a projection no longer catalogued, and nothing else', async () => {
    expect(retiredProjections()).toContain('checks');
    expect(projections().map((p) => p.name)).not.toContain('checks');
    const dir = makeTempDir('retired-');
    const events = new SqliteEventStore(join(dir.path, 'events.sqlite'));
    const views = new SqliteReadStore(join(dir.path, 'views.sqlite'));
    try {
      await events.append('checks-1', [{ type: 'CheckRecorded', data: { check_id: 1, endpoint_id: 1, checked_at: '2030-01-01T00:00:00.000Z' } }], { expectedRevision: 'any' });
      // The earlier version: its checks view applied the log (generation 1), then rebuilt (generation 2).
      const old = new ProjectionRunner(events, views, [oldChecksView], { owner: 'old', logger: silentLogger, dropDelayMs: 0 });
      await old.rebuild('checks');
      await old.rebuild('checks');
      await old.stop();
      const registry = new ProjectionRegistry(views);
      expect((await registry.pointer('checks'))?.generation).toBe(2);
      const kept = '_projections';
      const before = await views.listCollections();
      expect(before.filter((name) => name.startsWith('p__checks__'))).not.toEqual([]);

      // This version: the catalogue without it, and the retired list.
      const current = new ProjectionRunner(events, views, projections(), { owner: 'new', logger: silentLogger, dropDelayMs: 0, retired: retiredProjections() });
      const dropped = await current.dropStaleGenerations();
      expect(dropped.filter((name) => name.startsWith('p__checks__'))).toEqual(before.filter((name) => name.startsWith('p__checks__')));
      const after = await views.listCollections();
      expect(after.filter((name) => name.startsWith('p__checks__'))).toEqual([]);
      expect(after).toEqual(before.filter((name) => !name.startsWith('p__checks__')));
      expect(after).toContain(kept);
      expect(await registry.pointer('checks')).toBeNull();
      expect((await registry.checkpoint('checks', 1)).position).toBeNull();
      expect((await registry.checkpoint('checks', 2)).position).toBeNull();
      // A second pass finds nothing more.
      expect(await current.dropStaleGenerations()).toEqual([]);
      await current.stop();
    } finally {
      await views.close();
      await events.close();
      dir.remove();
    }
  });
});
