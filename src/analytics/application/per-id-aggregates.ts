import type { AggregateQuery, AggregateRow, FieldCondition, ReadStore } from '../../platform/read-store/read-store.port.js';

/**
 * No longer needed by analytics (rollups are summed by id, without `groupBy`); kept only while
 * src/statuspages still wraps its store with it. Was: a ReadStore view for the analytics query: an aggregate grouped by a field that the filter
 * restricts with an `in` list (per-project sums of a team, per-endpoint sums of a project) runs
 * as one aggregate per value instead. With `scope_id IN (...)` SQLite does not seek the
 * (scope, scope_id, granularity, start) index per value and scans every rollup row of the
 * scope kind, so the team query grew with the number of checks (bench/analytics.bench.ts);
 * with equality it seeks, and each group's figures are the same.
 */
export function withPerIdAggregates(store: ReadStore): ReadStore {
  const split = async (collection: string, query: AggregateQuery): Promise<AggregateRow[]> => {
    const field = query.groupBy;
    const condition = field ? query.filter?.[field] : undefined;
    const values = condition !== null && typeof condition === 'object' ? (condition as FieldCondition).in : undefined;
    if (!field || !values || Object.keys(condition as object).length !== 1) return store.aggregate(collection, query);
    const rows = await Promise.all(
      values.map((value) => store.aggregate(collection, { ...query, filter: { ...query.filter, [field]: value } })),
    );
    return rows.flat();
  };
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'aggregate') return split;
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
