import type { Filter, ReadStore } from '../../platform/read-store/read-store.port.js';

/**
 * Failed applicable checks after the newest successful one among the raw rows `scope` selects
 * (all of them when none succeeded), through the rows' (scope, success, checked_at_ms, check_id)
 * index: two or three indexed reads. `summarized`: failures among the checks retention replaced
 * by summaries, counted when no retained check succeeded.
 */
export async function consecutiveFailuresIn(store: ReadStore, collection: string, scope: Filter, summarized = 0): Promise<number> {
  const [lastSuccess] = await store.find(collection, {
    filter: { ...scope, success: true },
    sort: [
      ['checked_at_ms', 'desc'],
      ['check_id', 'desc'],
    ],
    limit: 1,
  });
  if (!lastSuccess) return summarized + (await store.count(collection, { ...scope, success: false }));
  const [later, sameInstant] = await Promise.all([
    store.count(collection, { ...scope, success: false, checked_at_ms: { gt: lastSuccess.checked_at_ms as number } }),
    store.count(collection, {
      ...scope,
      success: false,
      checked_at_ms: lastSuccess.checked_at_ms as number,
      check_id: { gt: lastSuccess.check_id as number },
    }),
  ]);
  return later + sameInstant;
}
