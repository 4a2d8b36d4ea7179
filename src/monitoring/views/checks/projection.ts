import { defineProjection } from '../../../platform/projections/projection.js';
import { CHECK_RECORDED, type CheckRecordedData } from '../../../checks/domain/check.js';
import { CHECKS_SUMMARIZED, type ChecksSummarizedData } from '../../../checks/domain/check-summary.js';
import { CHECKS, CHECKS_VIEW, checkViewDoc } from './view.js';
import type { Doc } from '../../../platform/read-store/read-store.port.js';

/**
 * Every recorded check, compact: a field at its default is left out and put back by
 * `presentCheck` (queries.ts). Always present: id (string), check_id,
 * endpoint_id, configuration_version, flags (success, source and response_excerpt_omitted as
 * bits, view.ts), status_code, latency_ms, time_to_first_byte_ms, duration_ms,
 * latency_threshold_ms (null while none applies) and checked_at (lists filter and sort on
 * endpoint_id, flags and checked_at).
 * Only when they differ from the default: body_complete (true), latency_anomaly (false),
 * alert_suppressed (false), failure_reason (null), region (`local`; a `?region=local` list
 * filters on its absence).
 * The response excerpt itself never leaves the log.
 *
 * One index serves every list: the checks of one endpoint newest first. The `source` and
 * `success` filters are applied while walking it (v1 had an index for each; they cost
 * ~100 bytes a check for lists whose filters match most of the endpoint's checks anyway).
 *
 * v3: the always-present fields are typed columns (the id is the check id as an integer key),
 * the optional ones stay JSON: about 63 bytes a check with its index instead of 244 as a JSON
 * document (docs/benchmarks.md, bench:lifecycle).
 *
 * v4 (issue 31): the source as a boolean column and response_excerpt_omitted as another (a
 * probed success has an excerpt: as JSON the flag took 27 bytes a check, the source's text 10);
 * both booleans take one header byte each.
 * v5: the timings and the latency threshold as columns too: a probed check's duration differs
 * from its latency (it includes waiting for a connection), and once the latency baseline is
 * ready every check has a threshold, so nearly every row kept them as JSON (15-45 bytes).
 * v6: `check_id` is the id field (`idField`): SQLite keeps the check id once, as the row's key, and
 * the list's index ends at checked_at (its entries end with the key anyway), about 8 bytes a check
 * less (docs/benchmarks.md, "Disk per probed check, third step").
 * v7: no `team_id` (the endpoint's team, which never changes; both reads go through the
 * endpoint's monitoring row), and success, source and response_excerpt_omitted as the bits of
 * one integer, `flags` (0 for a probed success with its excerpt): two to four bytes a check.
 */
export const checksProjection = defineProjection({
  name: CHECKS_VIEW,
  version: 7,
  collections: [
    {
      name: CHECKS,
      indexes: [{ fields: ['endpoint_id', 'checked_at', 'check_id'] }],
      idField: 'check_id',
      columns: {
        id: 'integer',
        check_id: 'integer',
        endpoint_id: 'integer',
        configuration_version: 'integer',
        flags: 'integer',
        status_code: 'integer',
        latency_ms: 'real',
        time_to_first_byte_ms: 'real',
        duration_ms: 'real',
        latency_threshold_ms: 'real',
        checked_at: 'timestamp',
      },
    },
  ],
  handlers: {
    [CHECK_RECORDED]: (event, views) => {
      views.put(CHECKS, checkViewDoc(event.data as CheckRecordedData) as unknown as Doc);
    },
    // Retention: a summarized check is gone (its id answers 404, lists no longer show it).
    [CHECKS_SUMMARIZED]: (event, views) => {
      for (const checkId of (event.data as ChecksSummarizedData).check_ids) views.delete(CHECKS, String(checkId));
    },
  },
});
