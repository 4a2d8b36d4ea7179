/**
 * RecordCheck: turns one probe outcome into a `CheckRecorded` on `checks-<endpointId>`, then the
 * signal events it causes on `alerts-<endpointId>`, both judged by the endpoint-alerts aggregate.
 *
 * - Endpoint, maintenance and alerting state are folded per process and read forward from the
 *   cached revision (StreamCache; the check stream from its tail), so a check costs a few short
 *   reads, not a replay.
 * - Maintenance coverage is computed at `checked_at` from `maintenance-<teamId>` (the same
 *   events the `monitoring` view's maintenance_windows are built from, without projection lag)
 *   plus the endpoint's legacy maintenance_until.
 * - Two appends through runStreamCommand (expected revision; on a conflict it reloads and decides
 *   again): the check, with a redelivered job id dropped; then, for a check that counts for
 *   alerting, the signal transitions it causes, decided on the state that includes it. A signal
 *   event names the check revision it was decided on, so a check already overtaken by a later
 *   judged one decides nothing. A crash between the two appends leaves the transition to the
 *   next counted check: the rules look at windows of checks, which still hold the condition.
 * - Appends for one endpoint are serialised in this process; across processes the expected
 *   revisions protect both streams.
 */
import { randomUUID } from 'node:crypto';
import { EndpointAlertsFold, checkWindowsAggregate, signalsAggregate, withSignals } from '../../alerting/application/endpoint-alerts-fold.js';
import {
  alertsStream,
  countsForAlerting,
  evolve,
  judge,
  signalTransitions,
  type EndpointAlertsEvent,
} from '../../alerting/domain/endpoint-alerts.js';
import { isCovered, maintenanceScheduleAggregate, type MaintenanceScheduleState } from '../../monitoring/domain/maintenance-schedule.js';
import { CHECK_RECORDED, type CheckRecordedData, type CheckSource, type ProbeOutcome } from '../../monitoring/domain/check.js';
import { checksStream, endpointStream, maintenanceStream } from '../../monitoring/domain/events.js';
import { systemContext } from '../../platform/es/command-context.js';
import { StreamCache } from '../../platform/es/stream-cache.js';
import { runStreamCommand } from '../../platform/es/stream-command.js';
import type { AppendResult, NewEvent } from '../../platform/event-store/event-store.port.js';
import type { Platform } from '../../platform/platform.js';
import { evolveEndpoint, type EndpointSnapshot, type EndpointSnapshotState } from '../../monitoring/domain/endpoint-snapshot.js';

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
  /** The check and the signal events it caused. */
  events: EndpointAlertsEvent[];
  /** Where the last append ended (null: nothing appended); with `events`, what read-your-writes waits for. */
  append: AppendResult | null;
}

export class CheckRecorder {
  readonly endpoints: StreamCache<EndpointSnapshotState>;
  private readonly maintenance: StreamCache<MaintenanceScheduleState>;
  readonly alerts: EndpointAlertsFold;
  private readonly queues = new Map<number, Promise<unknown>>();
  private idBlock: { next: number; end: number } | null = null;
  private idQueue: Promise<unknown> = Promise.resolve();

  constructor(private readonly platform: Platform) {
    this.endpoints = new StreamCache<EndpointSnapshotState>(platform.events, () => null, evolveEndpoint);
    this.maintenance = new StreamCache(platform.events, maintenanceScheduleAggregate.initial, maintenanceScheduleAggregate.evolve);
    this.alerts = new EndpointAlertsFold(platform.events);
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
    const context = systemContext('prober', input.jobId ?? randomUUID());
    let checkId: number | null = null;
    const recorded = await runStreamCommand(
      this.platform.events,
      checksStream(endpoint.endpoint_id),
      checkWindowsAggregate,
      context,
      async (state) => {
        // A redelivered job was recorded already: nothing to append.
        if (input.jobId !== null && state.recentJobIds.includes(input.jobId)) return { events: [], result: null };
        checkId ??= await this.nextCheckId();
        const check = judge(state, {
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
        return { events: check ? [{ type: CHECK_RECORDED, data: check, metadata: { occurred_at: outcome.checked_at } }] : [], result: null };
      },
      { fold: this.alerts.checks, attempts: MAX_ATTEMPTS, foldOwnAppends: true },
    );
    if (!recorded.append) return { check: null, events: [], append: null };
    const check = recorded.appended[0].data as CheckRecordedData;
    this.platform.metrics.checkRecorded(check);
    const checkEvent: EndpointAlertsEvent = { type: CHECK_RECORDED, data: check };
    const checkRevision = recorded.append.nextExpectedRevision;
    const after = evolve(recorded.state, checkEvent);
    const unchanged = { check, events: [checkEvent], append: recorded.append };
    if (!countsForAlerting(check)) return unchanged;
    const known = await this.alerts.alerts.load(alertsStream(endpoint.endpoint_id));
    if (known.revision !== -1 && signalTransitions(withSignals(after, known.state), check, endpoint.configuration).length === 0) return unchanged;
    const signalled = await runStreamCommand(
      this.platform.events,
      alertsStream(endpoint.endpoint_id),
      signalsAggregate,
      context,
      async (signals, loaded) => {
        // A later check was judged already (another process): this one decides nothing now.
        if (signals.judgedThrough >= checkRevision) return { events: [], result: null };
        const events: NewEvent[] = [];
        let current = signals;
        if (loaded.revision === -1) {
          const carried = await this.alerts.carryOver(endpoint.endpoint_id);
          events.push(carried);
          current = signalsAggregate.evolve(current, carried as never);
        }
        const transitions = signalTransitions(withSignals(after, current), check, endpoint.configuration);
        for (const event of transitions) events.push({ type: event.type, data: { ...event.data, check_revision: checkRevision }, metadata: { occurred_at: outcome.checked_at } });
        return { events, result: null };
      },
      { fold: this.alerts.alerts, attempts: MAX_ATTEMPTS, foldOwnAppends: true },
    );
    const signalEvents = signalled.appended.map((event) => ({ type: event.type, data: event.data }) as EndpointAlertsEvent);
    return { check, events: [checkEvent, ...signalEvents], append: signalled.append ?? recorded.append };
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
