/**
 * Retention over an event store adapter, on the stream layout the write path produces: checks
 * recorded through the prober's recorder (with alerting's judge, which also decides alert signals) are summarized and cut
 * by CheckRetention. Whatever the adapter can remove (rows by type in SQLite, only a stream
 * prefix with EventStoreDB's `$tb`), every check older than the horizon must leave the check
 * stream, and the alert signals must stay readable.
 */
import { EndpointAlertsFold } from '../../src/alerting/application/endpoint-alerts-fold.js';
import { ProbeRecorder } from '../../src/probing/application/probe-recorder.js';
import { CheckRetention } from '../../src/checks/application/retention.js';
import { CHECK_RECORDED, type CheckRecordedData } from '../../src/checks/domain/check.js';
import { checkSummariesStream, retentionHorizon, type ChecksSummarizedData } from '../../src/checks/domain/check-summary.js';
import type { EndpointConfiguration } from '../../src/monitoring/domain/endpoint-configuration.js';
import { DEFAULT_CONFIGURATION } from '../../src/monitoring/domain/endpoint.js';
import type { EndpointSnapshot } from '../../src/monitoring/domain/endpoint-snapshot.js';
import { checksStream } from '../../src/checks/domain/check.js';
import { DelegatingEventStore } from '../../src/platform/event-store/delegating-event-store.js';
import { type EventStore, WrongExpectedRevisionError } from '../../src/platform/event-store/event-store.port.js';
import { ConcurrencyError } from '../../src/platform/es/stream-command.js';
import { IdAllocator } from '../../src/platform/ids/id-allocator.js';
import type { Platform } from '../../src/platform/platform.js';

const NOW = Date.parse('2026-11-23T12:00:00.000Z');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const DAYS = 7;
const SIGNAL_TYPES = ['AlertSignalTriggered', 'AlertSignalRecovered'];

function endpoint(endpointId: number): EndpointSnapshot {
  const configuration: EndpointConfiguration = { ...DEFAULT_CONFIGURATION, latency_detection_mode: 'off', url: 'https://example.test/health' };
  return {
    endpoint_id: endpointId,
    team_id: 1,
    project_id: 1,
    name: 'retained',
    description: '',
    configuration,
    verification_token: 'token',
    configuration_version: 1,
    enabled: true,
    destination_verified: true,
    destination_verified_at: null,
    maintenance_until: null,
  };
}

/**
 * Checks every 6 hours for 20 days, with an outage 15 days ago (past the horizon: it triggers and
 * recovers the availability signal) and another 2 days ago (inside it).
 */
function outcomes(): Array<{ success: boolean; checked_at: string }> {
  const out: Array<{ success: boolean; checked_at: string }> = [];
  for (let at = NOW - 20 * DAY; at < NOW; at += 6 * HOUR) {
    const age = NOW - at;
    const down = (age <= 15 * DAY && age > 14 * DAY) || (age <= 2 * DAY && age > 1 * DAY);
    out.push({ success: !down, checked_at: new Date(at).toISOString() });
  }
  return out;
}

export function retentionContract(name: string, makeStore: () => Promise<EventStore>): void {
  describe(`check retention contract: ${name}`, () => {
    let store: EventStore;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    it('cuts every check older than the horizon from a check stream whose endpoint triggered and recovered alert signals, and keeps the signals', async () => {
      // A fresh endpoint id per run: a shared server keeps other runs' streams.
      const endpointId = 1_000_000 + Math.floor(Math.random() * 1_000_000_000);
      const platform = { events: store, ids: new IdAllocator(store), metrics: { checkRecorded: () => undefined } } as unknown as Platform;
      const recorder = new ProbeRecorder(platform);
      const planned = outcomes();
      for (const [i, planned_] of planned.entries()) {
        const success = planned_.success;
        await recorder.record({
          jobId: `job-${endpointId}-${i}`,
          source: 'scheduled',
          endpoint: endpoint(endpointId),
          outcome: {
            success,
            status_code: success ? 200 : 503,
            latency_ms: 50,
            time_to_first_byte_ms: 10,
            duration_ms: 50,
            body_complete: true,
            failure_reason: success ? null : 'status: 503',
            response_excerpt: null,
            checked_at: planned_.checked_at,
          },
        });
      }
      const signalsBefore = await signalEvents(store, endpointId);
      // Two outages: each triggered and recovered the availability signal.
      expect(signalsBefore.map((e) => e.type)).toEqual(['AlertSignalTriggered', 'AlertSignalRecovered', 'AlertSignalTriggered', 'AlertSignalRecovered']);

      const horizon = retentionHorizon(NOW, DAYS);
      const done = await new CheckRetention(store, { days: DAYS, maxChecksPerSummary: 25, pageSize: 10 }).applyToEndpoint(endpointId, horizon);
      const old = planned.filter((c) => Date.parse(c.checked_at) < horizon).length;
      expect(old).toBeGreaterThan(40);
      expect(done.removed).toBe(old);

      const left = (await store.readStream(checksStream(endpointId))).filter((e) => e.type === CHECK_RECORDED).map((e) => (e.data as CheckRecordedData).checked_at);
      expect(left.filter((at) => Date.parse(at) < horizon)).toEqual([]);
      expect(left).toEqual(planned.filter((c) => Date.parse(c.checked_at) >= horizon).map((c) => c.checked_at));
      const summarized = (await store.readStream(checkSummariesStream(endpointId))).reduce((n, e) => n + (e.data as ChecksSummarizedData).check_ids.length, 0);
      expect(summarized).toBe(old);
      // The signals are not retention's to remove.
      expect(await signalEvents(store, endpointId)).toEqual(signalsBefore);

      // A second pass has nothing left to do.
      expect(await new CheckRetention(store, { days: DAYS }).applyToEndpoint(endpointId, horizon)).toEqual({ summaries: 0, removed: 0 });
    });

    it('gives a pass up when every summary append loses to another writer, instead of trying for ever', async () => {
      const endpointId = 1_000_000 + Math.floor(Math.random() * 1_000_000_000);
      const platform = { events: store, ids: new IdAllocator(store), metrics: { checkRecorded: () => undefined } } as unknown as Platform;
      const recorder = new ProbeRecorder(platform);
      for (const [i, planned] of outcomes().slice(0, 8).entries()) {
        await recorder.record({
          jobId: `job-${endpointId}-${i}`,
          source: 'scheduled',
          endpoint: endpoint(endpointId),
          outcome: { success: true, status_code: 200, latency_ms: 50, time_to_first_byte_ms: 10, duration_ms: 50, body_complete: true, failure_reason: null, response_excerpt: null, checked_at: planned.checked_at },
        });
      }
      // Another pass (a paused lease holder) summarizes first every time.
      let tries = 0;
      const racing = new (class extends DelegatingEventStore {
        override async append(...args: Parameters<EventStore['append']>) {
          if (args[0] !== checkSummariesStream(endpointId)) return this.inner.append(...args);
          tries++;
          throw new WrongExpectedRevisionError(args[0], args[2].expectedRevision, tries);
        }
      })(store);

      await expect(new CheckRetention(racing, { days: DAYS }).applyToEndpoint(endpointId, retentionHorizon(NOW, DAYS))).rejects.toThrow(ConcurrencyError);
      expect(tries).toBeGreaterThan(1);
      expect((await store.readStream(checksStream(endpointId))).filter((e) => e.type === CHECK_RECORDED)).toHaveLength(8);
    });

    it('cuts the old checks of a stream that also holds signal events (a data dir from before alerts-<id>) once alerting carried them over, and alerting goes on from there', async () => {
      const endpointId = 1_000_000 + Math.floor(Math.random() * 1_000_000_000);
      const platform = { events: store, ids: new IdAllocator(store), metrics: { checkRecorded: () => undefined } } as unknown as Platform;
      const horizon = retentionHorizon(NOW, DAYS);
      // The old layout, appended directly: an outage that recovered, a second one still on,
      // all before the horizon; then two successes inside it.
      const steps = ['fail', 'fail', 'fail', 'Triggered', 'ok', 'ok', 'ok', 'Recovered', 'fail', 'fail', 'fail', 'Triggered', 'recent', 'recent'];
      let n = 0;
      let lastCheck: CheckRecordedData | null = null;
      let lastTriggerAt = '';
      for (const step of steps) {
        if (step === 'Triggered' || step === 'Recovered') {
          const data = { endpoint_id: endpointId, team_id: 1, project_id: 1, signal: 'availability', check_id: lastCheck!.check_id, at: lastCheck!.checked_at };
          if (step === 'Triggered') lastTriggerAt = data.at;
          await store.append(checksStream(endpointId), [{ type: `AlertSignal${step}`, data, metadata: { occurred_at: data.at } }], { expectedRevision: 'any' });
          continue;
        }
        n += 1;
        const at = step === 'recent' ? NOW - (3 - n + 12) * HOUR : NOW - 20 * DAY + n * HOUR;
        const success = step !== 'fail';
        lastCheck = {
          check_id: n,
          team_id: 1,
          project_id: 1,
          endpoint_id: endpointId,
          configuration_version: 1,
          source: 'scheduled',
          job_id: `old-${endpointId}-${n}`,
          success,
          status_code: success ? 200 : 503,
          latency_ms: 50,
          time_to_first_byte_ms: 50,
          duration_ms: 50,
          body_complete: true,
          failure_reason: success ? null : 'status: 503',
          response_excerpt: null,
          checked_at: new Date(at).toISOString(),
          alert_suppressed: false,
          latency_anomaly: false,
          latency_threshold_ms: null,
          imported: false,
        };
        await store.append(checksStream(endpointId), [{ type: CHECK_RECORDED, data: lastCheck, metadata: { occurred_at: lastCheck.checked_at } }], { expectedRevision: 'any' });
      }

      const alerting = new EndpointAlertsFold(store);
      const carriedOver = (id: number) => alerting.retiredCheckStreamTypes(id);
      const done = await new CheckRetention(store, { days: DAYS, carriedOver }).applyToEndpoint(endpointId, horizon);
      // Nine old checks and the two signal events between them; the trigger after the last old
      // check goes once a check after it is summarized.
      expect(done.removed).toBe(11);
      const left = await store.readStream(checksStream(endpointId));
      expect(left.map((e) => e.type)).toEqual(['AlertSignalTriggered', CHECK_RECORDED, CHECK_RECORDED]);
      const alerts = await store.readStream(`alerts-${endpointId}`);
      expect(alerts.map((e) => e.type)).toEqual(['AlertSignalsCarriedOver']);
      expect((alerts[0].data as { signals: Array<{ type: string; state: string; since: string }> }).signals.find((s) => s.type === 'availability')).toMatchObject({ state: 'triggered', since: lastTriggerAt });

      // The next success is the third in a row: the signal the old events left recovers.
      const recorded = await new ProbeRecorder(platform).record({
        jobId: `new-${endpointId}`,
        source: 'scheduled',
        endpoint: endpoint(endpointId),
        outcome: { success: true, status_code: 200, latency_ms: 50, time_to_first_byte_ms: 10, duration_ms: 50, body_complete: true, failure_reason: null, response_excerpt: null, checked_at: new Date(NOW - HOUR).toISOString() },
      });
      expect(recorded.events.map((e) => e.type)).toEqual([CHECK_RECORDED, 'AlertSignalRecovered']);
    });
  });
}

/** The endpoint's signal events wherever the layout keeps them (read from the log). */
async function signalEvents(store: EventStore, endpointId: number): Promise<Array<{ type: string; at: string }>> {
  const found: Array<{ type: string; at: string }> = [];
  for (let after: number | null = null; ; ) {
    const page = await store.readAll({ after, maxCount: 1000 });
    if (page.length === 0) return found;
    for (const event of page) {
      const data = event.data as { endpoint_id?: number; at?: string };
      if (SIGNAL_TYPES.includes(event.type) && data.endpoint_id === endpointId) found.push({ type: event.type, at: String(data.at) });
    }
    after = page[page.length - 1].position;
  }
}
