/**
 * The endpoint-alerts state of one endpoint as this process folds it, from its two streams
 * (see endpoint-alerts.ts):
 * - the check half from `checks-<endpointId>`, starting from the stream's tail: the state keeps
 *   bounded windows (MAX_BASELINE_SAMPLES successes, MAX_SIGNAL_WINDOW counted checks,
 *   RECENT_JOB_IDS job ids), so the newest checks that fill them decide it exactly, and a first
 *   touch reads a few pages instead of the whole stream;
 * - the signals from `alerts-<endpointId>`, which starts with the carried-over signals and then
 *   holds only transitions and links: short, folded from its start.
 * Both are cached per process and read forward from the cached revision afterwards.
 */
import { MAX_BASELINE_SAMPLES } from '../domain/baseline.js';
import {
  ALERT_SIGNAL_INCIDENT_LINKED,
  ALERT_SIGNAL_RECOVERED,
  ALERT_SIGNAL_TRIGGERED,
  ALERT_SIGNALS_CARRIED_OVER,
  alertsStream,
  CHECK_RECORDED,
  countsForAlerting,
  evolve,
  flapOf,
  initialState,
  MAX_SIGNAL_WINDOW,
  RECENT_JOB_IDS,
  type AlertSignalsCarriedOverData,
  type EndpointAlertsEvent,
  type EndpointAlertsState,
  type FlapState,
} from '../domain/endpoint-alerts.js';
import { checksStream, type CheckRecordedData } from '../../checks/domain/check.js';
import { StreamCache, type CachedStream } from '../../platform/es/stream-cache.js';
import { systemContext } from '../../platform/es/command-context.js';
import { runStreamCommand, type Aggregate } from '../../platform/es/stream-command.js';
import type { EventStore, NewEvent, RecordedEvent } from '../../platform/event-store/event-store.port.js';

const TAIL_PAGE = 500;
/** What check streams held before `alerts-<id>` existed, besides checks. */
const OLD_CHECK_STREAM_TYPES = [ALERT_SIGNAL_TRIGGERED, ALERT_SIGNAL_RECOVERED, ALERT_SIGNAL_INCIDENT_LINKED];

/** The check stream as the endpoint-alerts state sees it. */
export const checkWindowsAggregate: Aggregate<EndpointAlertsState> = {
  initial: initialState,
  evolve: (state, event) => evolve(state, event as unknown as EndpointAlertsEvent),
};

export interface SignalsState {
  signals: EndpointAlertsState['signals'];
  /** The availability signal's recent changes and whether it is flapping. */
  flap: FlapState;
  /** An endpoint with regions: each region's signals. */
  regionSignals?: EndpointAlertsState['regionSignals'];
  /** Failing by its availability rule on the checks its maintenance hid, since then (absent: not). */
  maintenanceFailingSince?: string;
  /** Its availability triggered, recovered by its rule on the checks its maintenance hid, since then (absent: not). */
  maintenanceRecoveredSince?: string;
  /** Highest check revision a signal event was decided on (-1: none). */
  judgedThrough: number;
}

/** The alerts stream: the signals, and how far along the check stream they were decided. */
export const signalsAggregate: Aggregate<SignalsState> = {
  initial: () => ({ signals: initialState().signals, flap: flapOf(initialState()), judgedThrough: -1 }),
  evolve: (state, event) => {
    const next = evolve(withSignals(initialState(), state), event as unknown as EndpointAlertsEvent);
    const checkRevision = (event.data as { check_revision?: number }).check_revision;
    return { ...signalsOf(next), judgedThrough: Math.max(state.judgedThrough, checkRevision ?? -1) };
  },
};

export class EndpointAlertsFold {
  readonly checks: StreamCache<EndpointAlertsState>;
  readonly alerts: StreamCache<SignalsState>;

  constructor(private readonly store: EventStore) {
    this.checks = new StreamCache(store, checkWindowsAggregate.initial, checkWindowsAggregate.evolve, 10_000, (streamId) => this.foldTail(streamId));
    this.alerts = new StreamCache(store, signalsAggregate.initial, signalsAggregate.evolve);
  }

  /**
   * The first event of a new alerts stream: the signals as the check stream's signal events (a
   * data dir from before the split) left them; the initial signals when it has none.
   */
  async carryOver(endpointId: number): Promise<NewEvent> {
    const { signals } = await this.signalsBeforeAlertsStream(endpointId);
    const data: AlertSignalsCarriedOverData = { endpoint_id: endpointId, signals: Object.values(signals) };
    return { type: ALERT_SIGNALS_CARRIED_OVER, data };
  }

  /**
   * For check retention: the signal event types an old check stream of this endpoint may hold,
   * once they are carried over to its alerts stream (this carries them over when the stream
   * does not exist yet), so retention cuts them with the checks; none when it has none.
   */
  async retiredCheckStreamTypes(endpointId: number): Promise<string[]> {
    const stream = alertsStream(endpointId);
    if ((await this.store.readStream(stream, { maxCount: 1 })).length === 0) {
      const old = (await this.store.readStream(checksStream(endpointId))).some((event) => OLD_CHECK_STREAM_TYPES.includes(event.type));
      if (!old) return [];
      await runStreamCommand(this.store, stream, signalsAggregate, systemContext('retention'), async (_signals, loaded) => ({
        events: loaded.revision === -1 ? [await this.carryOver(endpointId)] : [],
        result: null,
      }));
    }
    return OLD_CHECK_STREAM_TYPES;
  }

  /** Signal events left in the check stream: read once per endpoint, before its alerts stream exists. */
  private async signalsBeforeAlertsStream(endpointId: number): Promise<SignalsState> {
    const events = await this.store.readStream(checksStream(endpointId));
    return events.filter((event) => event.type !== CHECK_RECORDED).reduce(signalsAggregate.evolve, signalsAggregate.initial());
  }

  /** Reads the check stream backwards until its newest checks fill every window of the state. */
  private async foldTail(streamId: string): Promise<CachedStream<EndpointAlertsState>> {
    const newestFirst: RecordedEvent[] = [];
    let successes = 0;
    let counted = 0;
    let jobs = 0;
    for (let from: number | undefined; ; ) {
      const page = await this.store.readStream(streamId, { direction: 'backwards', maxCount: TAIL_PAGE, ...(from === undefined ? {} : { fromRevision: from }) });
      for (const event of page) {
        newestFirst.push(event);
        if (event.type !== CHECK_RECORDED) continue;
        const check = event.data as CheckRecordedData;
        if (check.job_id !== null) jobs += 1;
        if (countsForAlerting(check)) {
          counted += 1;
          if (check.success) successes += 1;
        }
      }
      const filled = successes >= MAX_BASELINE_SAMPLES && counted >= MAX_SIGNAL_WINDOW && jobs >= RECENT_JOB_IDS;
      if (filled || page.length < TAIL_PAGE) break;
      from = page[page.length - 1].revision - 1;
      if (from < 0) break;
    }
    let state = checkWindowsAggregate.initial();
    for (let i = newestFirst.length - 1; i >= 0; i--) state = checkWindowsAggregate.evolve(state, newestFirst[i]);
    return { state, revision: newestFirst[0]?.revision ?? -1 };
  }
}

/** The check half's state (which never holds a failing-during-maintenance state: only the alerts stream does) with the alerts stream's signals in place of its own. */
export function withSignals(checks: EndpointAlertsState, alerts: Omit<SignalsState, 'judgedThrough'>): EndpointAlertsState {
  return { ...checks, ...signalsOf(alerts) };
}

/** What the alerts stream decides of a state: the signals, flapping, the regions' signals and failing during maintenance. */
function signalsOf(state: Pick<EndpointAlertsState, 'signals' | 'flap' | 'regionSignals' | 'maintenanceFailingSince' | 'maintenanceRecoveredSince'>): Omit<SignalsState, 'judgedThrough'> {
  const signals: Omit<SignalsState, 'judgedThrough'> = { signals: state.signals, flap: flapOf(state) };
  if (state.regionSignals !== undefined) signals.regionSignals = state.regionSignals;
  if (state.maintenanceFailingSince !== undefined) signals.maintenanceFailingSince = state.maintenanceFailingSince;
  if (state.maintenanceRecoveredSince !== undefined) signals.maintenanceRecoveredSince = state.maintenanceRecoveredSince;
  return signals;
}
