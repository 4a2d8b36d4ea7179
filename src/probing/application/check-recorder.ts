/**
 * RecordCheck: turns one probe outcome into a `CheckRecorded` (plus any signal events) on
 * `checks-<endpointId>`, judged by the endpoint-alerts aggregate.
 *
 * - Endpoint, maintenance and alerting state are folded per process and read forward from the
 *   cached revision (StreamCache), so a check costs a few short reads, not a replay.
 * - Maintenance coverage is computed at `checked_at` from `maintenance-<teamId>` (the same
 *   events the `monitoring` view's maintenance_windows are built from, without projection lag)
 *   plus the endpoint's legacy maintenance_until.
 * - The aggregate drops a redelivered job id; the append goes through runStreamCommand (expected
 *   revision; on a conflict it reloads and decides again).
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
} from '../../alerting/domain/endpoint-alerts.js';
import { isCovered, maintenanceScheduleAggregate, type MaintenanceScheduleState } from '../../monitoring/domain/maintenance-schedule.js';
import { CHECK_RECORDED, type CheckRecordedData, type CheckSource, type ProbeOutcome } from '../../monitoring/domain/check.js';
import { checksStream, endpointStream, maintenanceStream } from '../../monitoring/domain/events.js';
import { systemContext } from '../../platform/es/command-context.js';
import { StreamCache } from '../../platform/es/stream-cache.js';
import { runStreamCommand, type Aggregate } from '../../platform/es/stream-command.js';
import type { AppendResult } from '../../platform/event-store/event-store.port.js';
import type { Platform } from '../../platform/platform.js';
import { evolveEndpoint, type EndpointSnapshot, type EndpointSnapshotState } from '../../monitoring/domain/endpoint-snapshot.js';

const MAX_ATTEMPTS = 8;

/** The checks stream as the endpoint-alerts decider sees it (evolve reads only type and data). */
export const alertsAggregate: Aggregate<EndpointAlertsState> = {
  initial: initialState,
  evolve: (state, event) => evolve(state, event as unknown as EndpointAlertsEvent),
};
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
  /** Where the append ended (null: nothing appended); with `events`, what read-your-writes waits for. */
  append: AppendResult | null;
}

export class CheckRecorder {
  readonly endpoints: StreamCache<EndpointSnapshotState>;
  private readonly maintenance: StreamCache<MaintenanceScheduleState>;
  readonly alerts: StreamCache<EndpointAlertsState>;
  private readonly queues = new Map<number, Promise<unknown>>();
  private idBlock: { next: number; end: number } | null = null;
  private idQueue: Promise<unknown> = Promise.resolve();

  constructor(private readonly platform: Platform) {
    this.endpoints = new StreamCache<EndpointSnapshotState>(platform.events, () => null, evolveEndpoint);
    this.maintenance = new StreamCache(platform.events, maintenanceScheduleAggregate.initial, maintenanceScheduleAggregate.evolve);
    this.alerts = new StreamCache<EndpointAlertsState>(platform.events, alertsAggregate.initial, alertsAggregate.evolve);
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
    let checkId: number | null = null;
    const { appended, append } = await runStreamCommand(
      this.platform.events,
      checksStream(endpoint.endpoint_id),
      alertsAggregate,
      systemContext('prober', input.jobId ?? randomUUID()),
      async (state) => {
        // A redelivered job was recorded already: nothing to append (the decider drops it too).
        if (input.jobId !== null && state.recentJobIds.includes(input.jobId)) return { events: [], result: null };
        checkId ??= await this.nextCheckId();
        const events = decide(state, {
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
        return { events: events.map((event) => ({ ...event, metadata: { occurred_at: outcome.checked_at } })), result: null };
      },
      { fold: this.alerts, attempts: MAX_ATTEMPTS, foldOwnAppends: true },
    );
    if (!append) return { check: null, events: [], append: null };
    const events = appended.map((event) => ({ type: event.type, data: event.data }) as EndpointAlertsEvent);
    const check = events.find((event) => event.type === CHECK_RECORDED)!.data as CheckRecordedData;
    this.platform.metrics.checkRecorded(check);
    return { check, events, append };
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
