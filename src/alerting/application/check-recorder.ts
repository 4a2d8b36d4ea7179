/**
 * RecordCheck: turns one probe outcome into a `CheckRecorded` (plus any signal events) on
 * `checks-<endpointId>`, judged by the endpoint-alerts aggregate.
 *
 * - Endpoint, maintenance and alerting state are folded per process and read forward from the
 *   cached revision (StreamCache), so a check costs a few short reads, not a replay.
 * - Maintenance coverage is computed at `checked_at` from `maintenance-<teamId>` (the same
 *   events the `monitoring` view's maintenance_windows are built from, without projection lag)
 *   plus the endpoint's legacy maintenance_until.
 * - The aggregate drops a redelivered job id; the append uses the expected revision and on a
 *   conflict reloads and decides again.
 * - Appends for one endpoint are serialised in this process; across processes the expected
 *   revision protects the stream.
 */
import { randomUUID } from 'node:crypto';
import {
  decide,
  evolve,
  initialState,
  type EndpointAlertsEvent,
  type EndpointAlertsState,
} from '../domain/endpoint-alerts.js';
import { evolveMaintenance, isCovered, type MaintenanceState } from '../domain/maintenance-coverage.js';
import { CHECK_RECORDED, type CheckRecordedData, type CheckSource, type ProbeOutcome } from '../../monitoring/domain/check.js';
import { checksStream, endpointStream, maintenanceStream } from '../../monitoring/domain/events.js';
import { metadataOf, systemContext } from '../../platform/es/command-context.js';
import { WrongExpectedRevisionError, type Position } from '../../platform/event-store/event-store.port.js';
import type { Platform } from '../../platform/platform.js';
import { evolveEndpoint, type EndpointSnapshot, type EndpointSnapshotState } from '../../probing/domain/endpoint-snapshot.js';
import { StreamCache } from '../../probing/application/stream-cache.js';

const MAX_ATTEMPTS = 8;
const CHECK_ID_BLOCK = 100;

export interface RecordCheckInput {
  jobId: string | null;
  source: CheckSource;
  endpoint: EndpointSnapshot;
  outcome: ProbeOutcome;
}

export interface RecordCheckResult {
  /** null when the job had already been recorded (redelivery). */
  check: CheckRecordedData | null;
  events: EndpointAlertsEvent[];
  position: Position | null;
}

export class CheckRecorder {
  readonly endpoints: StreamCache<EndpointSnapshotState>;
  private readonly maintenance: StreamCache<MaintenanceState>;
  private readonly alerts: StreamCache<EndpointAlertsState>;
  private readonly queues = new Map<number, Promise<unknown>>();
  private idBlock: { next: number; end: number } | null = null;
  private idQueue: Promise<unknown> = Promise.resolve();

  constructor(private readonly platform: Platform) {
    this.endpoints = new StreamCache<EndpointSnapshotState>(platform.events, () => null, evolveEndpoint);
    this.maintenance = new StreamCache<MaintenanceState>(platform.events, () => ({}), evolveMaintenance);
    this.alerts = new StreamCache<EndpointAlertsState>(platform.events, initialState, (state, event) =>
      evolve(state, event as unknown as EndpointAlertsEvent),
    );
  }

  /** The endpoint as of its latest event (null when it does not exist). */
  async loadEndpoint(endpointId: number): Promise<EndpointSnapshot | null> {
    return (await this.endpoints.load(endpointStream(endpointId))).state;
  }

  record(input: RecordCheckInput): Promise<RecordCheckResult> {
    const endpointId = input.endpoint.endpoint_id;
    const previous = this.queues.get(endpointId) ?? Promise.resolve();
    const run = previous.catch(() => undefined).then(() => this.recordNow(input));
    this.queues.set(endpointId, run);
    void run.finally(() => {
      if (this.queues.get(endpointId) === run) this.queues.delete(endpointId);
    }).catch(() => undefined);
    return run;
  }

  private async recordNow(input: RecordCheckInput): Promise<RecordCheckResult> {
    const { endpoint, outcome } = input;
    const windows = await this.maintenance.load(maintenanceStream(endpoint.team_id));
    const suppressed = isCovered(outcome.checked_at, endpoint, windows.state);
    const stream = checksStream(endpoint.endpoint_id);
    let checkId: number | null = null;
    for (let attempt = 1; ; attempt++) {
      const loaded = await this.alerts.load(stream);
      if (input.jobId !== null && loaded.state.recentJobIds.includes(input.jobId)) {
        return { check: null, events: [], position: null };
      }
      checkId ??= await this.nextCheckId();
      const events = decide(loaded.state, {
        outcome,
        check_id: checkId,
        team_id: endpoint.team_id,
        project_id: endpoint.project_id,
        endpoint_id: endpoint.endpoint_id,
        configuration_version: endpoint.configuration_version,
        source: input.source,
        job_id: input.jobId,
        imported: false,
        alert_suppressed: suppressed,
        settings: endpoint.configuration,
      });
      if (events.length === 0) return { check: null, events: [], position: null };
      const context = systemContext('prober', input.jobId ?? randomUUID());
      try {
        const append = await this.platform.events.append(
          stream,
          events.map((event) => ({ type: event.type, data: event.data, metadata: metadataOf(context, outcome.checked_at) })),
          { expectedRevision: loaded.revision === -1 ? 'no_stream' : loaded.revision },
        );
        this.alerts.remember(stream, { state: events.reduce(evolve, loaded.state), revision: append.nextExpectedRevision });
        const check = events.find((event) => event.type === CHECK_RECORDED)!.data as CheckRecordedData;
        return { check, events, position: append.position };
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError) || attempt >= MAX_ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * attempt));
      }
    }
  }

  /** Check ids come from the shared `check` sequence in blocks: one append per block. */
  private nextCheckId(): Promise<number> {
    const run = this.idQueue.catch(() => undefined).then(async () => {
      if (!this.idBlock || this.idBlock.next >= this.idBlock.end) {
        const range = await this.platform.ids.reserve('check', CHECK_ID_BLOCK);
        this.idBlock = { next: range.first, end: range.first + range.count };
      }
      return this.idBlock.next++;
    });
    this.idQueue = run;
    return run;
  }
}
