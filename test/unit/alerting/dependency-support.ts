/**
 * Dependencies through the real write path: the prober's recorder (alerting's judge, monitoring's
 * maintenance coverage and alerting's parent signals) over an in-memory SQLite log. Parents are
 * given as events on their own streams (`endpoint-<id>`, `alerts-<id>`), as the service writes them.
 */
import { CHECK_RECORDED, checksStream, type CheckRecordedData, type ProbeOutcome } from '../../../src/checks/domain/check.js';
import { alertsStream } from '../../../src/alerting/domain/endpoint-alerts.js';
import { DEFAULT_CONFIGURATION } from '../../../src/monitoring/domain/endpoint.js';
import type { EndpointConfiguration } from '../../../src/monitoring/domain/endpoint-configuration.js';
import type { EndpointSnapshot } from '../../../src/monitoring/domain/endpoint-snapshot.js';
import { endpointStream } from '../../../src/monitoring/domain/events.js';
import { SqliteEventStore } from '../../../src/platform/event-store/sqlite/sqlite-event-store.js';
import type { EventStore, RecordedEvent } from '../../../src/platform/event-store/event-store.port.js';
import { IdAllocator } from '../../../src/platform/ids/id-allocator.js';
import type { Platform } from '../../../src/platform/platform.js';
import { ProbeRecorder } from '../../../src/probing/application/probe-recorder.js';

export const TEAM = 1;
const START = Date.UTC(2026, 10, 21);

/** One recording process over `store` (in memory unless given). */
export class DependencyWorld {
  readonly recorder: ProbeRecorder;
  private minute = 0;
  private jobs = 0;

  constructor(readonly store: EventStore = new SqliteEventStore(':memory:'), private readonly name = 'w') {
    this.recorder = new ProbeRecorder({ events: store, ids: new IdAllocator(store), metrics: { checkRecorded: () => undefined } } as unknown as Platform);
  }

  /** Given: an endpoint registered (and enabled unless told) in `team`. */
  async endpoint(endpointId: number, options: { team?: number; enabled?: boolean; configuration?: Partial<EndpointConfiguration> } = {}): Promise<void> {
    const team = options.team ?? TEAM;
    const configuration = { ...DEFAULT_CONFIGURATION, url: `http://target.test/${endpointId}`, ...options.configuration };
    const events = [
      {
        type: 'EndpointRegistered',
        data: { endpoint_id: endpointId, team_id: team, project_id: 1, name: `E${endpointId}`, description: '', configuration, verification_token: 't', configuration_version: 1, created_at: this.at() },
      },
    ];
    if (options.enabled !== false) events.push({ type: 'EndpointEnabled', data: { endpoint_id: endpointId, team_id: team, at: this.at() } as never });
    await this.store.append(endpointStream(endpointId), events, { expectedRevision: 'any' });
  }

  /** Given: the parent's availability signal triggered or recovered (as alerting's judge appends it). */
  async parentSignal(endpointId: number, state: 'triggered' | 'ok'): Promise<void> {
    const type = state === 'triggered' ? 'AlertSignalTriggered' : 'AlertSignalRecovered';
    const data = { endpoint_id: endpointId, team_id: TEAM, project_id: 1, signal: 'availability', check_id: 0, at: this.at() };
    await this.store.append(alertsStream(endpointId), [{ type, data }], { expectedRevision: 'any' });
  }

  /** Given: the endpoint's legacy maintenance covering every check from now on (true) or none (false). */
  async maintenance(endpointId: number, covered: boolean): Promise<void> {
    const data = { endpoint_id: endpointId, team_id: TEAM, maintenance_until: covered ? '2030-01-01T00:00:00.000Z' : null, at: this.at() };
    await this.store.append(endpointStream(endpointId), [{ type: 'EndpointMaintenanceUntilSet', data }], { expectedRevision: 'any' });
  }

  /** When: a scheduled check of the endpoint is recorded. */
  check(endpointId: number, success: boolean): Promise<CheckRecordedData> {
    return this.record(endpointId, {
      success,
      status_code: success ? 200 : 503,
      latency_ms: 20,
      time_to_first_byte_ms: 20,
      duration_ms: 20,
      body_complete: true,
      failure_reason: success ? null : 'status: 503',
      response_excerpt: null,
      checked_at: this.at(),
    });
  }

  /** When: a scheduled check with this probe outcome is recorded. */
  async record(endpointId: number, outcome: ProbeOutcome): Promise<CheckRecordedData> {
    const endpoint = (await this.recorder.loadEndpoint(endpointId)) as EndpointSnapshot;
    const result = await this.recorder.record({ jobId: `${this.name}-job-${++this.jobs}`, source: 'scheduled', endpoint, outcome });
    return result.check as CheckRecordedData;
  }

  /** Then: what the endpoint's streams hold. */
  async checks(endpointId: number): Promise<CheckRecordedData[]> {
    return (await this.store.readStream(checksStream(endpointId))).filter((e) => e.type === CHECK_RECORDED).map((e) => e.data as CheckRecordedData);
  }

  async signals(endpointId: number): Promise<Array<{ type: string; check_id: number }>> {
    const events: RecordedEvent[] = await this.store.readStream(alertsStream(endpointId));
    return events
      .filter((e) => e.type === 'AlertSignalTriggered' || e.type === 'AlertSignalRecovered')
      .map((e) => ({ type: e.type, check_id: (e.data as { check_id: number }).check_id }));
  }

  /** Then: the alerts stream's events, as `type[:ended_by]@check_id`. */
  async alertEvents(endpointId: number): Promise<string[]> {
    const events: RecordedEvent[] = await this.store.readStream(alertsStream(endpointId));
    return events.map((e) => {
      const data = e.data as { check_id?: number; ended_by?: string };
      return `${e.type}${data.ended_by === undefined ? '' : `:${data.ended_by}`}@${data.check_id}`;
    });
  }

  close(): Promise<void> {
    return this.store.close();
  }

  private at(): string {
    return new Date(START + ++this.minute * 60_000).toISOString();
  }
}
