/**
 * Alerting's side of recording a check (the checks context's CheckJudge port):
 * - before the append: the latency threshold in force and whether the check exceeds it, judged
 *   on the endpoint-alerts state folded from the check stream's tail (endpoint-alerts-fold.ts);
 * - after it: the signal transitions the check causes, appended to `alerts-<endpointId>`
 *   through runStreamCommand, decided on the state that includes the check (a check its
 *   maintenance hid moves no signal, but may start or end failing during maintenance). Each names the check
 *   revision it was decided on, so a check already overtaken by a later judged one decides
 *   nothing. A crash between the two appends leaves the transition to the next counted check:
 *   the rules look at windows of checks, which still hold the condition.
 */
import type { CheckJudge, CheckPlace, RecordedEffect } from '../../checks/application/check-recorder.js';
import { CHECK_RECORDED, checksStream, type CheckRecordedData, type ProbeOutcome } from '../../checks/domain/check.js';
import type { EndpointSnapshot } from '../../monitoring/domain/endpoint-snapshot.js';
import type { CommandContext } from '../../platform/es/command-context.js';
import { runStreamCommand } from '../../platform/es/stream-command.js';
import type { AppendResult, EventStore, NewEvent } from '../../platform/event-store/event-store.port.js';
import {
  alertsStream,
  countsForAlerting,
  evolve,
  hiddenByMaintenance,
  judgeLatency,
  signalTransitions,
  type EndpointAlertsState,
  type LatencyJudgment,
} from '../domain/endpoint-alerts.js';
import { checkWindowsAggregate, EndpointAlertsFold, signalsAggregate, withSignals } from './endpoint-alerts-fold.js';

const MAX_ATTEMPTS = 8;

export class AlertingCheckJudge implements CheckJudge<EndpointSnapshot, EndpointAlertsState> {
  readonly aggregate = checkWindowsAggregate;
  readonly fold;
  /** This process's folds of the check and alerts streams (shared with the dependency reads). */
  readonly folds: EndpointAlertsFold;

  constructor(private readonly events: EventStore) {
    this.folds = new EndpointAlertsFold(events);
    this.fold = this.folds.checks;
  }

  hasJob(state: EndpointAlertsState, jobId: string): boolean {
    return state.recentJobIds.includes(jobId);
  }

  judge(state: EndpointAlertsState, outcome: ProbeOutcome, taken: CheckPlace, endpoint: EndpointSnapshot): LatencyJudgment {
    return judgeLatency(state, outcome, taken, endpoint.configuration);
  }

  async afterRecorded(
    state: EndpointAlertsState,
    check: CheckRecordedData,
    revision: number,
    endpoint: EndpointSnapshot,
    context: CommandContext,
  ): Promise<{ events: RecordedEffect[]; append: AppendResult | null }> {
    const counted = countsForAlerting(check);
    // A check its maintenance hid moves no signal, but may start or end failing during maintenance.
    if (!counted && !hiddenByMaintenance(check)) return { events: [], append: null };
    // The check stream's fold already holds the state after this check (runStreamCommand's
    // foldOwnAppends): folding it again would copy every window a second time.
    const folded = this.folds.checks.peek(checksStream(endpoint.endpoint_id));
    const after = folded !== undefined && folded.revision === revision ? folded.state : evolve(state, { type: CHECK_RECORDED, data: check });
    const stream = alertsStream(endpoint.endpoint_id);
    const known = await this.folds.alerts.load(stream);
    // A hidden check deciding nothing does not start an alerts stream either (carrying over old signals cannot make it decide: it starts nothing on a triggered signal).
    if ((known.revision !== -1 || !counted) && signalTransitions(withSignals(after, known.state), check, endpoint.configuration).length === 0) return { events: [], append: null };
    const signalled = await runStreamCommand(
      this.events,
      stream,
      signalsAggregate,
      context,
      async (signals, loaded) => {
        // A later check was judged already (another process): this one decides nothing now.
        if (signals.judgedThrough >= revision) return { events: [], result: null };
        const events: NewEvent[] = [];
        let current = signals;
        if (loaded.revision === -1) {
          const carried = await this.folds.carryOver(endpoint.endpoint_id);
          events.push(carried);
          current = signalsAggregate.evolve(current, carried as never);
        }
        for (const event of signalTransitions(withSignals(after, current), check, endpoint.configuration)) {
          events.push({ type: event.type, data: { ...event.data, check_revision: revision }, metadata: { occurred_at: check.checked_at } });
        }
        return { events, result: null };
      },
      { fold: this.folds.alerts, attempts: MAX_ATTEMPTS, foldOwnAppends: true, groupCommit: true },
    );
    return { events: signalled.appended.map(({ type, data }) => ({ type, data })), append: signalled.append };
  }
}
