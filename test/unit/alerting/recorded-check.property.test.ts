/**
 * The property tests of endpoint alerts drive `decide`; the prober records checks through the
 * checks context's recorder with alerting's judge. Both must build the same check, key order
 * included (the order is the stored form's), and decide the same signals, so that what those
 * tests prove holds for what the service stores.
 */
import fc from 'fast-check';
import { decide, evolve, initialState, type EndpointAlertsState, type RecordCheckCommand } from '../../../src/alerting/domain/endpoint-alerts.js';
import { upcasters } from '../../../src/app/contexts.js';
import { CHECK_RECORDED, checksStream, compactCheckV5, type CheckRecordedData, type ProbeOutcome } from '../../../src/checks/domain/check.js';
import type { EndpointSnapshot } from '../../../src/monitoring/domain/endpoint-snapshot.js';
import { SqliteEventStore } from '../../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { withUpcasting } from '../../../src/platform/event-store/upcasting.js';
import { DependencyWorld } from './dependency-support.js';

const PARENT = 10;
const ENDPOINT = 20;
const START = Date.UTC(2026, 10, 27);
const SETTINGS = { latency_min_samples: 3, latency_trigger_count: 2, latency_trigger_window: 3, latency_recovery_count: 2, latency_min_increase_ms: 0, latency_min_increase_percent: 0, flap_threshold: 3 };

const stepArb = fc.record({
  success: fc.integer({ min: 0, max: 3 }).map((n) => n !== 0),
  // mostly steady, with spikes the baseline finds anomalous
  latency_ms: fc.oneof({ arbitrary: fc.integer({ min: 40, max: 60 }), weight: 4 }, { arbitrary: fc.integer({ min: 200, max: 400 }), weight: 1 }),
  ttfb_ms: fc.integer({ min: 1, max: 10 }),
  manual: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
  // days until the certificate expires (threshold 14), or no certificate (http)
  certificate_days: fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined }),
  region: fc.constantFrom('eu', 'us'),
  // a redelivery of an earlier job now and then
  redelivered: fc.integer({ min: 0, max: 7 }).map((n) => n === 0),
});

const runArb = fc.record({
  regions: fc.boolean(),
  parentDown: fc.boolean(),
  steps: fc.array(stepArb, { minLength: 10, maxLength: 30 }),
});

/** What decide reports beside the check: the signal events' kind, signal and region. */
function signalsOf(events: Array<{ type: string; data: unknown }>): string[] {
  return events
    .filter((event) => event.type !== CHECK_RECORDED && event.type !== 'AlertSignalsCarriedOver')
    .map((event) => {
      const data = event.data as { signal?: string; region?: string };
      return [event.type, data.signal, data.region].filter((part) => part !== undefined).join(':');
    });
}

describe('a recorded check, built once', () => {
  it('decide builds the check the recorder stores, key for key, and decides the same signals', async () => {
    await fc.assert(
      fc.asyncProperty(runArb, async ({ regions, parentDown, steps }) => {
        const raw = new SqliteEventStore(':memory:');
        const world = new DependencyWorld(withUpcasting(raw, upcasters()));
        try {
          const regionSettings = regions ? { regions: ['eu', 'us'], region_quorum: 1 } : {};
          await world.endpoint(PARENT);
          await world.endpoint(ENDPOINT, { configuration: { ...SETTINGS, ...regionSettings, depends_on: [PARENT] } });
          if (parentDown) await world.parentSignal(PARENT, 'triggered');
          const endpoint = (await world.recorder.loadEndpoint(ENDPOINT)) as EndpointSnapshot;
          let state: EndpointAlertsState = initialState();
          const jobs: string[] = [];
          for (const [index, step] of steps.entries()) {
            const checkedAt = new Date(START + (index + 1) * 60_000).toISOString();
            const outcome: ProbeOutcome = {
              success: step.success,
              status_code: step.success ? 200 : 503,
              latency_ms: step.latency_ms,
              time_to_first_byte_ms: step.ttfb_ms,
              duration_ms: step.latency_ms + 1,
              body_complete: true,
              failure_reason: step.success ? null : 'status: 503',
              response_excerpt: step.success ? null : 'unavailable',
              checked_at: checkedAt,
            };
            if (step.certificate_days !== undefined) outcome.certificate_expires_at = new Date(Date.parse(checkedAt) + step.certificate_days * 86_400_000).toISOString();
            const jobId = step.redelivered && jobs.length > 0 ? jobs[index % jobs.length] : `${ENDPOINT}:${START + index * 60_000}`;
            jobs.push(jobId);
            const source = step.manual ? 'manual' : 'scheduled';
            const region = regions ? step.region : 'local';
            const result = await world.recorder.record({ jobId, source, endpoint, outcome, region, regional: regions });

            const suppressedBy = parentDown && !step.success ? [PARENT] : [];
            const command: RecordCheckCommand = {
              outcome,
              check_id: result.check?.check_id ?? -1,
              team_id: endpoint.team_id,
              project_id: endpoint.project_id,
              endpoint_id: ENDPOINT,
              configuration_version: endpoint.configuration_version,
              source,
              job_id: jobId,
              alert_suppressed: suppressedBy.length > 0,
              suppressed_by: suppressedBy,
              imported: false,
              region,
              regional: regions,
              settings: endpoint.configuration,
            };
            const decided = decide(state, command);
            state = decided.reduce(evolve, state);

            if (result.check === null) {
              expect(decided).toEqual([]);
              continue;
            }
            const check = decided[0].data as CheckRecordedData;
            expect(JSON.stringify(check)).toBe(JSON.stringify(result.check));
            // The stored form the log holds is the compact form of decide's check.
            const stored = (await raw.readStream(checksStream(ENDPOINT))).at(-1)!;
            expect(JSON.stringify(stored.data)).toBe(JSON.stringify(compactCheckV5(check, checkedAt, checksStream(ENDPOINT))));
            expect(signalsOf(decided)).toEqual(signalsOf(result.events));
          }
        } finally {
          await world.close();
        }
      }),
      { numRuns: 40, endOnFailure: true },
    );
  });
});
