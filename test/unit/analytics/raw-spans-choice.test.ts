import { Slices } from '../../../src/analytics/application/slices.js';
import { RawSpans } from '../../../src/analytics/views/rollups/queries.js';
import { CHECK_MINUTES_COLLECTION, CHECK_MINUTE_COLUMNS, RAW_CHECKS_COLLECTION, RAW_CHECK_COLUMNS, ROLLUP_MEMBERS_COLLECTION, ROLLUP_MEMBER_COLUMNS } from '../../../src/analytics/views/rollups/view.js';
import { MemoryReadStore } from './support/memory-store.js';

/**
 * How a project's rows of a span are read (`RawSpans`): a key range of the time -> key map walks
 * every check of the service in the span; the project's members are a seek each plus a lookup
 * per row found. A project with a tenth of the service's endpoints reads about a tenth of the
 * walked keys through its members, each row a lookup of its own: the key range is cheaper
 * (before, the choice counted the members' seeks only and took the members, 2-3 times main's
 * read time for such a project). A project with a few of them reads its members.
 */
describe('RawSpans: key range or members', () => {
  const MINUTE = 60_000;
  const from = Date.parse('2026-03-01T00:00:00Z');
  const to = from + 24 * 60 * MINUTE;

  async function spansOver(projectSizes: number[], keysInSpan: number): Promise<RawSpans> {
    const store = new MemoryReadStore();
    await store.ensureCollection({ name: ROLLUP_MEMBERS_COLLECTION, indexes: [{ fields: ['project_id', 'endpoint_id'], sparse: true }], columns: ROLLUP_MEMBER_COLUMNS });
    await store.ensureCollection({ name: CHECK_MINUTES_COLLECTION, indexes: [], idField: 'minute', columns: CHECK_MINUTE_COLUMNS });
    await store.ensureCollection({ name: RAW_CHECKS_COLLECTION, indexes: [], idField: 'check_id', columns: RAW_CHECK_COLUMNS });
    let endpointId = 0;
    const members = projectSizes.flatMap((size, p) => Array.from({ length: size }, () => ({ id: String(++endpointId), endpoint_id: endpointId, project_id: p + 1 })));
    const first = Math.floor(from / MINUTE);
    const last = Math.floor((to - 1) / MINUTE);
    await store.commit([
      ...members.map((doc) => ({ op: 'put' as const, collection: ROLLUP_MEMBERS_COLLECTION, doc })),
      { op: 'put', collection: CHECK_MINUTES_COLLECTION, doc: { id: String(first), minute: first, first_check_id: 1, last_check_id: 1 } },
      { op: 'put', collection: CHECK_MINUTES_COLLECTION, doc: { id: String(last), minute: last, first_check_id: keysInSpan, last_check_id: keysInSpan } },
    ]);
    return new RawSpans(store, new Slices(), { checks: RAW_CHECKS_COLLECTION, members: ROLLUP_MEMBERS_COLLECTION, checkMinutes: CHECK_MINUTES_COLLECTION });
  }

  it('walks the key range for a project with a tenth of the endpoints', async () => {
    const spans = await spansOver(Array(10).fill(100), 1_000_000);
    const [parts] = await spans.partsOf('project', 1, [{ from, to }]);
    expect(parts).toEqual([{ filter: { project_id: 1, check_id: { gte: 1, lte: 1_000_000 } }, byKey: true }]);
  });

  it('reads its members for a project with a few of the endpoints', async () => {
    const spans = await spansOver([5, ...Array(10).fill(100)], 1_000_000);
    const [parts] = await spans.partsOf('project', 1, [{ from, to }]);
    expect(parts).toEqual([{ filter: { endpoint_id: { in: [1, 2, 3, 4, 5] }, project_id: 1 }, byKey: false }]);
  });

  it('walks a short span whatever the project', async () => {
    const spans = await spansOver([5, ...Array(10).fill(100)], 300);
    const [parts] = await spans.partsOf('project', 1, [{ from, to }]);
    expect(parts[0].byKey).toBe(true);
  });
});
