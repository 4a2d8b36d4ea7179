/**
 * The endpoint-alerts aggregate: it judges each probe outcome (latency threshold and anomaly),
 * keeps the latency baseline and drives the availability and latency alert signals
 * (api-decisions: Alerting).
 *
 * Two streams per endpoint feed it. `checks-<endpointId>` holds the checks (windows, baseline,
 * redelivered job ids); `alerts-<endpointId>` holds the signal events and incident links, so
 * retention can cut every old check off the check stream (EventStoreDB `$tb` cuts a prefix
 * only). The check events never touch the signals and the signal events never touch the
 * windows, so the two streams fold in either order. A data dir from before the split has signal
 * events in its check streams: they fold the same way, and the alerts stream of such an endpoint
 * starts with AlertSignalsCarriedOver, the signals as those older events left them, so the alerts
 * stream alone answers for the signals from then on.
 *
 * Rules and the choices made where api-decisions is silent:
 * - Only checks that count for alerting touch signals and the baseline: scheduled, not
 *   suppressed, not imported. Manual, suppressed and imported checks still get
 *   `latency_threshold_ms` and `latency_anomaly` for display.
 * - Availability triggers on a failed counted check when at least trigger_count of the last
 *   trigger_window counted checks failed; it recovers after recovery_count consecutive counted
 *   successes. A success never triggers, so a freshly recovered signal does not re-trigger on
 *   failures it already reported: only a new failure can.
 * - Latency: each successful counted check with a threshold is judged (exceeds when
 *   latency_ms > threshold). Triggers on an exceeding check when at least trigger_count of the
 *   last trigger_window judged checks exceeded; recovers after recovery_count consecutive judged
 *   checks at or under the threshold. Failed checks are not judged and do not break a streak.
 *   Judgments keep the threshold in force when they were made.
 * - The monitor's own busy time is not the target's (`judgeLatency`): a check over the
 *   threshold only with the time the monitor's event loop was busy during its request
 *   (`loop_busy_ms`) is recorded `latency_unjudged` and, like a failed check, moves no latency
 *   window and recovers nothing; one whose busy time exceeds the materiality floor
 *   (`latency_inflated`) is judged but does not join the baseline.
 * - The check being judged is compared to the baseline before its own latency joins it, so a
 *   slow check cannot raise the bar it is measured against.
 * - When no threshold applies to a counted check (mode `off`, `fixed` without a value, or an
 *   `auto` baseline not ready, e.g. after min_samples was raised), past judgments are dropped and
 *   an active latency signal recovers on that check: nothing is being exceeded any more.
 * - Availability uses the latency trigger settings (AlertRules follow them).
 * - Settings arrive with each command, so a new configuration takes effect on the next check.
 * - A redelivered probe job (job_id among the last RECENT_JOB_IDS) records nothing.
 * - Windows keep at most MAX_SIGNAL_WINDOW outcomes: a larger trigger_window acts as that many.
 * - A signal's `since` is when it last changed state (null if it never has); its `incident_id`
 *   is set by AlertSignalIncidentLinked while triggered and cleared on recovery.
 * - Certificate (https): a counted check that noted its server certificate's expiry triggers
 *   the certificate signal when that expiry is within `certificate_expiry_days` of the check
 *   (0: off); a later counted check whose certificate is valid beyond it recovers it, as does
 *   turning the setting off. A check without a certificate (http, or a failed handshake, which
 *   fails the check) leaves the signal as it is.
 * - Flapping (issue 26; flap_threshold, flap_window_seconds): when the availability signal has
 *   changed state at least flap_threshold times within the last flap_window_seconds (counting the
 *   change being decided), AlertSignalFlappingStarted follows that change, and every availability
 *   change while flapping carries `flapping: true` (the automatic incident stays open through
 *   recoveries). Flapping stops (AlertSignalFlappingStopped) on the first counted check that
 *   finds the signal recovered for a whole window. Change times are the checks' `checked_at`.
 * - Failing during maintenance (session 25; dependencies.ts says what it is for): the checks a
 *   maintenance window hid (scheduled, `alert_suppressed` without `suppressed_by`, not
 *   imported) since the endpoint's last counted check are kept in a window of their own
 *   (`maintenanceChecks`), and the availability rule runs on them: AlertMaintenanceFailureStarted
 *   when a hidden failure makes trigger_count of the last trigger_window hidden checks failures
 *   while the availability signal is ok; AlertMaintenanceFailureEnded (`ended_by: recovered`)
 *   after recovery_count hidden successes in a row. It opens, pages and counts nothing. Once the
 *   window is over the endpoint's own signal takes over: the state ends with the counted check
 *   that triggers availability (`ended_by: triggered`, after the trigger in the same append) or
 *   a counted success with recovery_count counted successes in a row; a counted failure that
 *   does not yet trigger leaves it as it is. Endpoints with regions are left out (their
 *   availability is the quorum's).
 * - Recovered during maintenance (session 26), the mirror image: an endpoint whose availability
 *   was already triggered when its window began and whose hidden checks recover by its rule
 *   (recovery_count hidden successes in a row) gets AlertMaintenanceRecovered: its signal stays
 *   triggered (its incident stays open, maintenance moves no signal), but it no longer
 *   suppresses its dependents. Hidden failures by the trigger rule end it
 *   (AlertMaintenanceRecoveryEnded, `ended_by: failing`). After the window it ends with the
 *   counted check that recovers the signal (`ended_by: recovered`, same append) or a counted
 *   failure that makes trigger_count of the last trigger_window counted checks failures
 *   (`failing`).
 *
 * Regions (an endpoint with `regions`; see regions.ts for the quorum decision):
 * - A regional check (taken for one of the endpoint's regions, `regional: true`) joins its
 *   region's windows and baseline, never the endpoint's: each region runs the availability and
 *   latency rules above on its own checks, with its own baseline, and its signals change through
 *   RegionSignalTriggered / RegionSignalRecovered.
 * - The endpoint's signals then follow the quorum: triggered while at least `region_quorum`
 *   regions' signals are triggered, recovered when fewer are; a region without a counted check
 *   in the last three intervals (`regionHorizonMs`) is unknown and counts neither way. The
 *   endpoint's signal events carry the evidence (`regions`: failing, up, unknown, quorum).
 *   Flapping applies to the endpoint's availability changes the quorum makes, as to an
 *   endpoint's own (the regions' signals do not flap: they open nothing).
 * - While an endpoint has regions, checks without a region decide nothing, and the other way
 *   round: a regional check of an endpoint that no longer has regions decides nothing.
 */

import {
  CHECK_RECORDED,
  isApplicable,
  recordedCheck,
  type CheckFacts,
  type CheckRecordedData,
  type ProbeOutcome,
} from '../../checks/domain/check.js';
import { alertRelations, certificateExpiryDays, DEFAULT_LATENCY_SETTINGS, type AlertRelationSettings, type AlertRules, type EndpointConfiguration, type LatencySettings } from '../../monitoring/domain/endpoint-configuration.js';
import { DEFAULT_REGION } from '../../platform/config/region.js';
import { computeBaseline, MAX_BASELINE_SAMPLES, type LatencyBaseline } from './baseline.js';
import { RecentValues } from './recent-values.js';
import { quorumDecision, regionHorizonMs, type RegionEvidence, type RegionObservation } from './regions.js';

export { CHECK_RECORDED };
export const ALERT_SIGNAL_TRIGGERED = 'AlertSignalTriggered';
export const ALERT_SIGNAL_RECOVERED = 'AlertSignalRecovered';
export const ALERT_SIGNAL_INCIDENT_LINKED = 'AlertSignalIncidentLinked';
export const ALERT_SIGNALS_CARRIED_OVER = 'AlertSignalsCarriedOver';
export const ALERT_SIGNAL_FLAPPING_STARTED = 'AlertSignalFlappingStarted';
export const ALERT_SIGNAL_FLAPPING_STOPPED = 'AlertSignalFlappingStopped';
export const REGION_SIGNAL_TRIGGERED = 'RegionSignalTriggered';
export const REGION_SIGNAL_RECOVERED = 'RegionSignalRecovered';
export const ALERT_MAINTENANCE_FAILURE_STARTED = 'AlertMaintenanceFailureStarted';
export const ALERT_MAINTENANCE_FAILURE_ENDED = 'AlertMaintenanceFailureEnded';
export const ALERT_MAINTENANCE_RECOVERED = 'AlertMaintenanceRecovered';
export const ALERT_MAINTENANCE_RECOVERY_ENDED = 'AlertMaintenanceRecoveryEnded';

/** Signal events and incident links of one endpoint (the checks are on `checks-<endpointId>`). */
export const alertsStream = (endpointId: number) => `alerts-${endpointId}`;

export const MAX_SIGNAL_WINDOW = 100;
/** Availability change times kept for flapping: flap_threshold is at most 50. */
export const MAX_FLAP_CHANGES = 50;
export const RECENT_JOB_IDS = 100;

export const SIGNAL_TYPES = ['availability', 'latency', 'certificate'] as const;
export type SignalType = (typeof SIGNAL_TYPES)[number];
export type SignalStateName = 'ok' | 'triggered';

export interface AlertSignalTriggeredData {
  endpoint_id: number;
  team_id: number;
  project_id: number;
  signal: SignalType;
  check_id: number;
  at: string;
  /** Latency signal only: the threshold the triggering check exceeded. */
  threshold_ms?: number;
  /** Revision of the check on `checks-<endpoint_id>` (absent on signals recorded in that stream). */
  check_revision?: number;
  /** Certificate signal only: the certificate's notAfter and the threshold it came within. */
  expires_at?: string;
  threshold_days?: number;
  /** Availability only: the endpoint is flapping (a recently auto-resolved incident re-opens instead of a new one). */
  flapping?: true;
  /** An endpoint with regions: the regions as at the decision, and the quorum. */
  regions?: RegionEvidence;
}

export interface AlertSignalRecoveredData {
  endpoint_id: number;
  team_id: number;
  project_id: number;
  signal: SignalType;
  check_id: number;
  at: string;
  /** Revision of the check on `checks-<endpoint_id>` (absent on signals recorded in that stream). */
  check_revision?: number;
  /** Availability only: the endpoint is flapping, so its automatic incident stays open. */
  flapping?: true;
  /** An endpoint with regions: the regions as at the decision, and the quorum. */
  regions?: RegionEvidence;
}

/** One region's signal changed, by its own rule on its own checks (an endpoint with regions). */
export interface RegionSignalData {
  endpoint_id: number;
  team_id: number;
  project_id: number;
  region: string;
  signal: QuorumSignal;
  check_id: number;
  at: string;
  threshold_ms?: number;
  check_revision?: number;
}

/** The availability signal started flapping (with the change that made it) or stopped (a whole window recovered). */
export interface AlertSignalFlappingData {
  endpoint_id: number;
  team_id: number;
  project_id: number;
  signal: 'availability';
  check_id: number;
  at: string;
  /** Changes of state within the window when it started; the window, in seconds. */
  changes?: number;
  window_seconds: number;
  check_revision?: number;
}

/**
 * The endpoint started or stopped failing by its availability rule on the checks its maintenance
 * window hid: while it is, it suppresses its dependents' failing checks as a triggered parent does.
 */
export interface AlertMaintenanceFailureData {
  endpoint_id: number;
  team_id: number;
  project_id: number;
  check_id: number;
  at: string;
  /** Ended only: `recovered` by successes, or `triggered` when the availability signal took over. */
  ended_by?: 'recovered' | 'triggered';
  check_revision?: number;
}

/**
 * The endpoint, its availability triggered, recovered by its rule on the checks its maintenance
 * window hid, or stopped being so: while it is, it suppresses nothing.
 */
export interface AlertMaintenanceRecoveryData extends Omit<AlertMaintenanceFailureData, 'ended_by'> {
  /** Ended only: `failing` by the trigger rule again, or `recovered` when the availability signal took over. */
  ended_by?: 'failing' | 'recovered';
}

/** First event of `alerts-<endpoint_id>`: the signals as the events before the stream left them. */
export interface AlertSignalsCarriedOverData {
  endpoint_id: number;
  signals: SignalState[];
}

export interface AlertSignalIncidentLinkedData {
  endpoint_id: number;
  signal: SignalType;
  incident_id: number;
  /** Revision on `alerts-<endpoint_id>` of the trigger whose outage the incident holds (absent on links from before it was recorded, or for a trigger in the check stream). */
  trigger_revision?: number;
}

export type EndpointAlertsEvent =
  | { type: typeof CHECK_RECORDED; data: CheckRecordedData }
  | { type: typeof ALERT_SIGNAL_TRIGGERED; data: AlertSignalTriggeredData }
  | { type: typeof ALERT_SIGNAL_RECOVERED; data: AlertSignalRecoveredData }
  | { type: typeof ALERT_SIGNAL_INCIDENT_LINKED; data: AlertSignalIncidentLinkedData }
  | { type: typeof ALERT_SIGNALS_CARRIED_OVER; data: AlertSignalsCarriedOverData }
  | { type: typeof ALERT_SIGNAL_FLAPPING_STARTED; data: AlertSignalFlappingData }
  | { type: typeof ALERT_SIGNAL_FLAPPING_STOPPED; data: AlertSignalFlappingData }
  | { type: typeof REGION_SIGNAL_TRIGGERED; data: RegionSignalData }
  | { type: typeof REGION_SIGNAL_RECOVERED; data: RegionSignalData }
  | { type: typeof ALERT_MAINTENANCE_FAILURE_STARTED; data: AlertMaintenanceFailureData }
  | { type: typeof ALERT_MAINTENANCE_FAILURE_ENDED; data: AlertMaintenanceFailureData }
  | { type: typeof ALERT_MAINTENANCE_RECOVERED; data: AlertMaintenanceRecoveryData }
  | { type: typeof ALERT_MAINTENANCE_RECOVERY_ENDED; data: AlertMaintenanceRecoveryData };

export interface SignalState {
  type: SignalType;
  state: SignalStateName;
  since: string | null;
  incident_id: number | null;
}

/** Settings the signals are judged with: the latency ones, the certificate threshold and the flapping ones (defaults when absent). */
export type SignalSettings = LatencySettings & { certificate_expiry_days?: number } & Partial<AlertRelationSettings>;

/**
 * The windows of counted checks the availability and latency rules judge (the endpoint's, or one
 * region's). Each is a RecentValues: a counted check appends to it without copying it (an
 * endpoint's baseline holds up to MAX_BASELINE_SAMPLES), and the states before keep reading what
 * they held. Documents store them as arrays (`Stored`, `storedState`).
 */
export interface CheckWindows {
  /** Latencies of successful counted checks, oldest first. */
  baselineSamples: RecentValues<number>;
  baselineUpdatedAt: string | null;
  /** Counted checks, oldest first: true when the check failed. */
  availabilityFailures: RecentValues<boolean>;
  consecutiveSuccesses: number;
  /** Judged successful counted checks, oldest first: true when over the threshold. */
  latencyExceeded: RecentValues<boolean>;
  consecutiveUnder: number;
}

export interface EndpointAlertsState extends CheckWindows {
  signals: Readonly<Record<SignalType, SignalState>>;
  /** Absent from states stored before flapping existed (`flapOf` reads it). */
  flap?: FlapState;
  recentJobIds: RecentValues<string>;
  /** notAfter of the certificate the newest counted https check saw (absent: none seen yet). */
  certificateExpiresAt?: string;
  /** Per region, the windows of its regional checks (absent until the first one). */
  regionWindows?: Readonly<Record<string, RegionWindows>>;
  /** Per region, its availability and latency signals (absent until the first region signal event). */
  regionSignals?: Readonly<Record<string, Readonly<Record<QuorumSignal, SignalState>>>>;
  /**
   * The checks a maintenance window hid since the last counted check, as the availability rule
   * reads them (absent when there are none). In the command side's fold only, never in a view.
   */
  maintenanceChecks?: MaintenanceChecks;
  /** Since when the endpoint fails by its availability rule on the checks its maintenance hid (absent: it does not). */
  maintenanceFailingSince?: string;
  /** Since when the endpoint, its availability triggered, has recovered by its rule on the checks its maintenance hid (absent: it has not). */
  maintenanceRecoveredSince?: string;
}

/** The availability window of the checks a maintenance window hid. */
export type MaintenanceChecks = Pick<CheckWindows, 'availabilityFailures' | 'consecutiveSuccesses'>;

const NO_MAINTENANCE_CHECKS: MaintenanceChecks = { availabilityFailures: RecentValues.empty(), consecutiveSuccesses: 0 };

const EMPTY_WINDOWS: CheckWindows = {
  baselineSamples: RecentValues.empty(),
  baselineUpdatedAt: null,
  availabilityFailures: RecentValues.empty(),
  consecutiveSuccesses: 0,
  latencyExceeded: RecentValues.empty(),
  consecutiveUnder: 0,
};

/** `S` with its windows as arrays, as a document stores them (JSON; read stores freeze what they keep). */
export type Stored<S> = { [K in keyof S]: S[K] extends RecentValues<infer V> ? readonly V[] : S[K] };

/** The state as a document stores it: every window, a region's too, an array. */
export type StoredAlertsState = Omit<Stored<EndpointAlertsState>, 'regionWindows'> & {
  regionWindows?: Readonly<Record<string, Stored<RegionWindows>>>;
};

/** The state's windows as arrays, for a document (a window that holds just its backing hands it over, uncopied). */
export function storedState(state: EndpointAlertsState): StoredAlertsState {
  const { regionWindows, ...rest } = state;
  const stored: StoredAlertsState = { ...rest, ...storedWindows(state), recentJobIds: state.recentJobIds.toArray() };
  if (regionWindows !== undefined) stored.regionWindows = mapRecord(regionWindows, (windows) => ({ ...windows, ...storedWindows(windows) }));
  return stored;
}

/** The state a document stored (`storedState`): its frozen arrays are read in place, others copied. */
export function stateFromStored(stored: StoredAlertsState): EndpointAlertsState {
  const { regionWindows, ...rest } = stored;
  const state: EndpointAlertsState = { ...rest, ...windowsFromStored(stored), recentJobIds: RecentValues.of(stored.recentJobIds) };
  if (regionWindows !== undefined) state.regionWindows = mapRecord(regionWindows, (windows) => ({ ...windows, ...windowsFromStored(windows) }));
  return state;
}

function storedWindows(windows: CheckWindows): Pick<Stored<CheckWindows>, 'baselineSamples' | 'availabilityFailures' | 'latencyExceeded'> {
  return { baselineSamples: windows.baselineSamples.toArray(), availabilityFailures: windows.availabilityFailures.toArray(), latencyExceeded: windows.latencyExceeded.toArray() };
}

function windowsFromStored(windows: Stored<CheckWindows>): Pick<CheckWindows, 'baselineSamples' | 'availabilityFailures' | 'latencyExceeded'> {
  return { baselineSamples: RecentValues.of(windows.baselineSamples), availabilityFailures: RecentValues.of(windows.availabilityFailures), latencyExceeded: RecentValues.of(windows.latencyExceeded) };
}

function mapRecord<A, B>(record: Readonly<Record<string, A>>, map: (value: A) => B): Record<string, B> {
  const mapped: Record<string, B> = {};
  for (const key of Object.keys(record)) mapped[key] = map(record[key]);
  return mapped;
}

/** The signals a region has and the quorum decides: availability and latency (the certificate signal is the endpoint's). */
export const QUORUM_SIGNALS = ['availability', 'latency'] as const;
export type QuorumSignal = (typeof QUORUM_SIGNALS)[number];

/** A region's share of the check windows: the same rules, on its own checks. */
export interface RegionWindows extends CheckWindows {
  /** checked_at of its newest counted check. */
  lastCheckedAt: string;
}

/** What the decision needs of the endpoint beyond the signal settings (regions, and the interval for unknown regions). */
export type AlertSettings = SignalSettings & Partial<Pick<EndpointConfiguration, 'regions' | 'region_quorum' | 'interval_seconds'>>;

/** The availability signal's recent changes of state (their `at`, oldest first) and whether it is flapping. */
export interface FlapState {
  changes: readonly string[];
  flapping: boolean;
}

const NOT_FLAPPING: FlapState = { changes: [], flapping: false };

export function flapOf(state: Pick<EndpointAlertsState, 'flap'>): FlapState {
  return state.flap ?? NOT_FLAPPING;
}

/** Record one probe outcome: the check's facts (ids, region, suppression) and the settings in force. */
export interface RecordCheckCommand extends CheckFacts {
  outcome: ProbeOutcome;
  settings: AlertSettings;
}

/** A signal as alert status lists it; the certificate signal adds the expiry last seen. */
export type SignalStatus = SignalState & { expires_at?: string | null };

export interface AlertStatusView {
  team_id: number;
  endpoint_id: number;
  latency_baseline: LatencyBaseline | null;
  signals: SignalStatus[];
  flapping: boolean;
  /** An endpoint with regions: each region's state, signals and baseline. */
  regions?: RegionStatusView[];
  /** An endpoint with regions: the quorum decision per signal as the regions stand now. */
  quorum?: { required: number; availability: RegionEvidence & { failing_count: number; triggered: boolean }; latency: RegionEvidence & { failing_count: number; triggered: boolean } };
}

export interface RegionStatusView {
  name: string;
  /** unknown: no counted check in the last three intervals (`regionHorizonMs`, judged at `now`). */
  state: 'known' | 'unknown';
  last_checked_at: string | null;
  latency_baseline: LatencyBaseline | null;
  signals: SignalState[];
}

export function initialState(): EndpointAlertsState {
  return {
    ...EMPTY_WINDOWS,
    signals: {
      availability: { type: 'availability', state: 'ok', since: null, incident_id: null },
      latency: { type: 'latency', state: 'ok', since: null, incident_id: null },
      certificate: initialSignal('certificate'),
    },
    flap: NOT_FLAPPING,
    recentJobIds: RecentValues.empty(),
  };
}

function initialSignal(type: SignalType): SignalState {
  return { type, state: 'ok', since: null, incident_id: null };
}

/** The signal's state; states stored before the certificate signal existed lack it. */
export function signalOf(state: Pick<EndpointAlertsState, 'signals'>, type: SignalType): SignalState {
  return state.signals[type] ?? initialSignal(type);
}

/** Availability follows the latency trigger settings. */
export function alertRulesFrom(settings: LatencySettings): AlertRules {
  return {
    trigger_count: settings.latency_trigger_count,
    trigger_window: settings.latency_trigger_window,
    recovery_count: settings.latency_recovery_count,
  };
}

/** A scheduled check a maintenance window hid (suppressed, but not by a parent), not imported: the failing-during-maintenance rule reads these. */
export function hiddenByMaintenance(check: Pick<CheckRecordedData, 'source' | 'alert_suppressed' | 'suppressed_by' | 'imported'>): boolean {
  return check.source === 'scheduled' && check.alert_suppressed && check.suppressed_by === undefined && !check.imported;
}

/** Scheduled, unsuppressed and not imported: the checks that move signals and the baseline. */
export function countsForAlerting(
  check: Pick<CheckRecordedData, 'source' | 'alert_suppressed' | 'imported'>,
): boolean {
  return isApplicable(check) && !check.imported;
}

export function currentBaseline(state: EndpointAlertsState, settings: LatencySettings): LatencyBaseline | null {
  if (state.baselineUpdatedAt === null) return null;
  return computeBaseline(state.baselineSamples, settings, state.baselineUpdatedAt);
}

/** The threshold the next check is judged against, or null when none applies. */
export function latencyThreshold(state: EndpointAlertsState, settings: LatencySettings): number | null {
  switch (settings.latency_detection_mode) {
    case 'fixed':
      return settings.latency_fixed_threshold_ms;
    case 'auto':
      return currentBaseline(state, settings)?.threshold_ms ?? null;
    case 'off':
      return null;
  }
}

/** The check and the signal events it causes, decided together (the two halves below). */
export function decide(state: EndpointAlertsState, command: RecordCheckCommand): EndpointAlertsEvent[] {
  const check = judge(state, command);
  if (check === null) return [];
  const recorded: EndpointAlertsEvent = { type: CHECK_RECORDED, data: check };
  return [recorded, ...signalTransitions(evolve(state, recorded), check, command.settings)];
}

/** The check as recorded (its latency judged on the state before it); null for a redelivered job. */
export function judge(state: EndpointAlertsState, command: RecordCheckCommand): CheckRecordedData | null {
  if (command.job_id !== null && state.recentJobIds.includes(command.job_id)) return null;
  return judgeCheck(state, command);
}

/** The signal events a recorded check causes, judged on the state that includes it. */
export function signalTransitions(after: EndpointAlertsState, check: CheckRecordedData, settings: AlertSettings): EndpointAlertsEvent[] {
  const regions = settings.regions ?? [];
  const regional = regions.length > 0 || check.regional === true;
  if (!countsForAlerting(check)) return !regional && hiddenByMaintenance(check) ? maintenanceTransition(after, check, alertRulesFrom(settings)) : [];
  if (regional) {
    if (regions.length === 0 || check.regional !== true) return [];
    return [...regionalTransitions(after, check, settings, regions), ...certificateTransition(after, check, settings)];
  }
  const rules = alertRulesFrom(settings);
  const availability = flapping(after, check, availabilityTransition(after, check, rules), settings);
  return [...availability, ...maintenanceHandover(after, check, availability, rules), ...latencyTransition(after, check, rules), ...certificateTransition(after, check, settings)];
}

/**
 * A check its maintenance hid: the availability rule run on the hidden checks, from the verdict
 * they gave so far (the signal's state until they gave one), records where that verdict differs
 * from the signal maintenance holds still: failing while the signal is ok, recovered while it is
 * triggered.
 */
function maintenanceTransition(after: EndpointAlertsState, check: CheckRecordedData, rules: AlertRules): EndpointAlertsEvent[] {
  const signalTriggered = after.signals.availability.state === 'triggered';
  // The same rule as the availability signal's, read on the hidden checks' window as its own.
  const hidden: EndpointAlertsState = { ...after, ...(after.maintenanceChecks ?? NO_MAINTENANCE_CHECKS) };
  return verdictChange(hidden, check, rules, maintenanceVerdict(after)).map((change) => {
    if (signalTriggered) return change === 'fails' ? maintenanceRecovery(check, 'failing') : maintenanceRecovery(check);
    return change === 'fails' ? maintenanceFailure(check) : maintenanceFailure(check, 'recovered');
  });
}

/** What the checks a maintenance window hid say of the endpoint's availability: their own verdict where they gave one, else its signal's. */
function maintenanceVerdict(state: EndpointAlertsState): SignalStateName {
  if (state.maintenanceFailingSince !== undefined) return 'triggered';
  if (state.maintenanceRecoveredSince !== undefined) return 'ok';
  return state.signals.availability.state;
}

/** Whether the availability rule on `windows` turns a verdict of `from` around with this check. */
function verdictChange(windows: EndpointAlertsState, check: CheckRecordedData, rules: AlertRules, from: SignalStateName): Array<'fails' | 'recovers'> {
  const view: EndpointAlertsState = { ...windows, signals: { ...windows.signals, availability: { ...windows.signals.availability, state: from } } };
  return availabilityTransition(view, check, rules).map((event) => (event.type === ALERT_SIGNAL_TRIGGERED ? 'fails' : 'recovers'));
}

/**
 * A counted check (the maintenance is over) ends the hidden checks' verdict once the endpoint's
 * own rule answers: its signal comes round to the verdict (in the same append), or the counted
 * checks turn the verdict around by the same rule.
 */
function maintenanceHandover(after: EndpointAlertsState, check: CheckRecordedData, availability: EndpointAlertsEvent[], rules: AlertRules): EndpointAlertsEvent[] {
  if (after.maintenanceFailingSince !== undefined) {
    if (availability.some((event) => event.type === ALERT_SIGNAL_TRIGGERED)) return [maintenanceFailure(check, 'triggered')];
    return verdictChange(after, check, rules, 'triggered').length > 0 ? [maintenanceFailure(check, 'recovered')] : [];
  }
  if (after.maintenanceRecoveredSince !== undefined) {
    if (availability.some((event) => event.type === ALERT_SIGNAL_RECOVERED)) return [maintenanceRecovery(check, 'recovered')];
    return verdictChange(after, check, rules, 'ok').length > 0 ? [maintenanceRecovery(check, 'failing')] : [];
  }
  return [];
}

function maintenanceFailure(check: CheckRecordedData, endedBy?: AlertMaintenanceFailureData['ended_by']): EndpointAlertsEvent {
  const data: AlertMaintenanceFailureData = { ...signalIds(check), check_id: check.check_id, at: check.checked_at };
  if (endedBy === undefined) return { type: ALERT_MAINTENANCE_FAILURE_STARTED, data };
  data.ended_by = endedBy;
  return { type: ALERT_MAINTENANCE_FAILURE_ENDED, data };
}

function maintenanceRecovery(check: CheckRecordedData, endedBy?: AlertMaintenanceRecoveryData['ended_by']): EndpointAlertsEvent {
  const data: AlertMaintenanceRecoveryData = { ...signalIds(check), check_id: check.check_id, at: check.checked_at };
  if (endedBy === undefined) return { type: ALERT_MAINTENANCE_RECOVERED, data };
  data.ended_by = endedBy;
  return { type: ALERT_MAINTENANCE_RECOVERY_ENDED, data };
}

export function evolve(state: EndpointAlertsState, event: EndpointAlertsEvent): EndpointAlertsState {
  switch (event.type) {
    case CHECK_RECORDED:
      return evolveCheckRecorded(state, event.data);
    case ALERT_SIGNAL_TRIGGERED:
      return withChange(withSignal(state, { type: event.data.signal, state: 'triggered', since: event.data.at, incident_id: null }), event.data);
    case ALERT_SIGNAL_RECOVERED:
      return withChange(withSignal(state, { type: event.data.signal, state: 'ok', since: event.data.at, incident_id: null }), event.data);
    case ALERT_SIGNAL_FLAPPING_STARTED:
      return { ...state, flap: { ...flapOf(state), flapping: true } };
    case ALERT_SIGNAL_FLAPPING_STOPPED:
      return { ...state, flap: { ...flapOf(state), flapping: false } };
    case ALERT_SIGNAL_INCIDENT_LINKED: {
      const signal = signalOf(state, event.data.signal);
      // A link arriving after the signal recovered belongs to a finished episode.
      if (signal.state !== 'triggered') return state;
      return withSignal(state, { ...signal, incident_id: event.data.incident_id });
    }
    case ALERT_SIGNALS_CARRIED_OVER:
      return event.data.signals.reduce((next, signal) => withSignal(next, { ...signal }), state);
    case ALERT_MAINTENANCE_FAILURE_STARTED:
      return { ...state, maintenanceFailingSince: event.data.at };
    case ALERT_MAINTENANCE_FAILURE_ENDED: {
      const { maintenanceFailingSince: _ended, ...rest } = state;
      return rest;
    }
    case ALERT_MAINTENANCE_RECOVERED:
      return { ...state, maintenanceRecoveredSince: event.data.at };
    case ALERT_MAINTENANCE_RECOVERY_ENDED: {
      const { maintenanceRecoveredSince: _ended, ...rest } = state;
      return rest;
    }
    case REGION_SIGNAL_TRIGGERED:
    case REGION_SIGNAL_RECOVERED: {
      const { region, signal, at } = event.data;
      const current = state.regionSignals?.[region] ?? initialRegionSignals();
      const next: SignalState = { type: signal, state: event.type === REGION_SIGNAL_TRIGGERED ? 'triggered' : 'ok', since: at, incident_id: null };
      return { ...state, regionSignals: { ...state.regionSignals, [region]: { ...current, [signal]: next } } };
    }
    default:
      return state;
  }
}

/** The alert-status `data` object. Settings give the baseline its sensitivity and min_samples. */
export function alertStatusView(
  state: EndpointAlertsState,
  ids: { team_id: number; endpoint_id: number },
  settings: AlertSettings,
  now: Date = new Date(),
): AlertStatusView {
  const signals: SignalStatus[] = [{ ...signalOf(state, 'availability') }, { ...signalOf(state, 'latency') }];
  // Listed once a certificate has been seen (https), with the expiry of the newest one.
  const certificate = signalOf(state, 'certificate');
  if (state.certificateExpiresAt !== undefined || certificate.state === 'triggered') {
    signals.push({ ...certificate, expires_at: state.certificateExpiresAt ?? null });
  }
  const view: AlertStatusView = { team_id: ids.team_id, endpoint_id: ids.endpoint_id, latency_baseline: currentBaseline(state, settings), signals, flapping: flapOf(state).flapping };
  const regions = settings.regions ?? [];
  if (regions.length === 0) return view;
  const observed = observeRegions(state, regions, now.getTime(), settings);
  view.regions = regions.map((name, index) => {
    const region = regionView(state, name);
    return {
      name,
      state: observed[index].known ? 'known' : 'unknown',
      last_checked_at: state.regionWindows?.[name]?.lastCheckedAt ?? null,
      latency_baseline: currentBaseline(region, settings),
      signals: QUORUM_SIGNALS.map((type) => ({ ...signalOf(region, type) })),
    };
  });
  const quorum = regionQuorum(settings, regions);
  const decision = (signal: QuorumSignal) => {
    const { evidence, triggered } = quorumDecision(observed.map((region) => ({ ...region, failing: region.failing[signal] })), quorum);
    return { ...evidence, failing_count: evidence.failing.length, triggered };
  };
  view.quorum = { required: quorum, availability: decision('availability'), latency: decision('latency') };
  return view;
}

/** A check's latency as judged on the state before it. */
export type LatencyJudgment = Pick<CheckRecordedData, 'latency_anomaly' | 'latency_threshold_ms' | 'latency_unjudged' | 'latency_inflated'>;

/**
 * The latency judgment of a probe outcome taken in `region` (for that region's windows when
 * `regional`). A response that waited in the socket while the monitor's own event loop was busy
 * reads as target latency (at saturation tens to hundreds of ms against a target answering in
 * one), so `latency_ms - loop_busy_ms` is what is certainly the target's:
 * - at or under the threshold: judged within, as ever;
 * - over it even without the busy time: judged exceeding (the target is slow whatever we did);
 * - over it only with the busy time in it: not judged (`latency_unjudged`), like a failed check.
 * A check whose busy time is above the materiality floor (`latency_min_increase_ms`) stays out
 * of the baseline either way (`latency_inflated`): its latency is partly the monitor's.
 */
export function judgeLatency(
  state: EndpointAlertsState,
  outcome: Pick<ProbeOutcome, 'success' | 'latency_ms' | 'loop_busy_ms'>,
  taken: { region?: string; regional?: boolean },
  settings: LatencySettings,
): LatencyJudgment {
  // A regional check is judged against its region's baseline (a far region is not "slow").
  const threshold = latencyThreshold(taken.regional === true ? regionView(state, taken.region ?? DEFAULT_REGION) : state, settings);
  if (!outcome.success) return { latency_anomaly: false, latency_threshold_ms: threshold };
  const busy = outcome.loop_busy_ms ?? 0;
  if (threshold !== null && outcome.latency_ms > threshold && outcome.latency_ms - busy <= threshold) {
    return { latency_anomaly: false, latency_threshold_ms: threshold, latency_unjudged: true };
  }
  const anomaly = threshold !== null && outcome.latency_ms > threshold;
  return busy > materialityFloorMs(settings)
    ? { latency_anomaly: anomaly, latency_threshold_ms: threshold, latency_inflated: true }
    : { latency_anomaly: anomaly, latency_threshold_ms: threshold };
}

/** The smallest latency increase that counts (a configuration from before the floor has its default). */
function materialityFloorMs(settings: Partial<Pick<LatencySettings, 'latency_min_increase_ms'>>): number {
  return settings.latency_min_increase_ms ?? DEFAULT_LATENCY_SETTINGS.latency_min_increase_ms;
}

/** Whether the check's latency was judged: a success not left unjudged. It moves the latency windows. */
function latencyJudged(check: Pick<CheckRecordedData, 'success' | 'latency_unjudged'>): boolean {
  return check.success && check.latency_unjudged !== true;
}

/** The check with its latency judged on the state before it, built as the recorder builds it. */
export function judgeCheck(state: EndpointAlertsState, command: RecordCheckCommand): CheckRecordedData {
  return recordedCheck(command.outcome, command, judgeLatency(state, command.outcome, command, command.settings));
}

function evolveCheckRecorded(state: EndpointAlertsState, check: CheckRecordedData): EndpointAlertsState {
  const recentJobIds = check.job_id === null ? state.recentJobIds : state.recentJobIds.with(check.job_id, RECENT_JOB_IDS);
  if (!countsForAlerting(check)) {
    if (check.regional === true || !hiddenByMaintenance(check)) return { ...state, recentJobIds };
    return { ...state, maintenanceChecks: availabilityAfter(state.maintenanceChecks ?? NO_MAINTENANCE_CHECKS, check), recentJobIds };
  }
  // A counted check: the maintenance is over, its hidden checks count for nothing more.
  if (state.maintenanceChecks !== undefined) {
    const { maintenanceChecks: _over, ...rest } = state;
    state = rest;
  }
  if (check.regional === true) {
    const region = check.region ?? DEFAULT_REGION;
    const view = regionView(state, region);
    const next = { ...view, ...availabilityAfter(view, check), ...latencyAfter(view, check), ...baselineAfter(view, check) };
    const windows: RegionWindows = { ...windowsOf(next), lastCheckedAt: check.checked_at };
    return { ...state, regionWindows: { ...state.regionWindows, [region]: windows }, recentJobIds };
  }
  return {
    ...state,
    ...availabilityAfter(state, check),
    ...latencyAfter(state, check),
    ...baselineAfter(state, check),
    ...(check.certificate_expires_at === undefined ? {} : { certificateExpiresAt: check.certificate_expires_at }),
    recentJobIds,
  };
}

function availabilityAfter(state: MaintenanceChecks, check: CheckRecordedData): MaintenanceChecks {
  return {
    availabilityFailures: state.availabilityFailures.with(!check.success, MAX_SIGNAL_WINDOW),
    consecutiveSuccesses: check.success ? state.consecutiveSuccesses + 1 : 0,
  };
}

function latencyAfter(state: EndpointAlertsState, check: CheckRecordedData) {
  if (check.latency_threshold_ms === null) return { latencyExceeded: RecentValues.empty<boolean>(), consecutiveUnder: 0 };
  if (!latencyJudged(check)) return {};
  return {
    latencyExceeded: state.latencyExceeded.with(check.latency_anomaly, MAX_SIGNAL_WINDOW),
    consecutiveUnder: check.latency_anomaly ? 0 : state.consecutiveUnder + 1,
  };
}

function baselineAfter(state: EndpointAlertsState, check: CheckRecordedData) {
  if (!latencyJudged(check) || check.latency_inflated === true) return {};
  return {
    baselineSamples: state.baselineSamples.with(check.latency_ms, MAX_BASELINE_SAMPLES),
    baselineUpdatedAt: check.checked_at,
  };
}

/** Signal events for the availability signal, judged on the state that includes the check. */
function availabilityTransition(after: EndpointAlertsState, check: CheckRecordedData, rules: AlertRules): EndpointAlertsEvent[] {
  const signal = after.signals.availability;
  if (signal.state === 'ok' && !check.success) {
    const failures = countTrueInLast(after.availabilityFailures, rules.trigger_window);
    if (failures >= rules.trigger_count) return [triggered(check, 'availability')];
  }
  if (signal.state === 'triggered' && after.consecutiveSuccesses >= rules.recovery_count) {
    return [recovered(check, 'availability')];
  }
  return [];
}

function latencyTransition(after: EndpointAlertsState, check: CheckRecordedData, rules: AlertRules): EndpointAlertsEvent[] {
  const signal = after.signals.latency;
  if (signal.state === 'triggered' && check.latency_threshold_ms === null) return [recovered(check, 'latency')];
  if (signal.state === 'ok' && check.latency_anomaly) {
    const exceeded = countTrueInLast(after.latencyExceeded, rules.trigger_window);
    if (exceeded >= rules.trigger_count) {
      return [triggered(check, 'latency', check.latency_threshold_ms ?? undefined)];
    }
  }
  if (signal.state === 'triggered' && latencyJudged(check) && after.consecutiveUnder >= rules.recovery_count) {
    return [recovered(check, 'latency')];
  }
  return [];
}

const DAY_MS = 86_400_000;

/** Certificate signal events, judged on the check's own certificate. */
function certificateTransition(after: EndpointAlertsState, check: CheckRecordedData, settings: SignalSettings): EndpointAlertsEvent[] {
  const signal = signalOf(after, 'certificate');
  const days = certificateExpiryDays(settings);
  if (signal.state === 'triggered' && days === 0) return [recovered(check, 'certificate')];
  if (check.certificate_expires_at === undefined) return [];
  const expiring = days > 0 && Date.parse(check.certificate_expires_at) - Date.parse(check.checked_at) <= days * DAY_MS;
  if (signal.state === 'ok' && expiring) {
    const event = triggered(check, 'certificate');
    Object.assign(event.data, { expires_at: check.certificate_expires_at, threshold_days: days });
    return [event];
  }
  if (signal.state === 'triggered' && !expiring) return [recovered(check, 'certificate')];
  return [];
}

/** Days from `at` until `expiresAt`, a part day counting as one (0 once past). */
export function daysLeft(expiresAt: string, at: string): number {
  return Math.max(0, Math.ceil((Date.parse(expiresAt) - Date.parse(at)) / DAY_MS));
}

/**
 * The availability transition (if any) marked `flapping` while the endpoint flaps, followed by
 * AlertSignalFlappingStarted when this change makes it flap; without a transition,
 * AlertSignalFlappingStopped once the signal has stayed recovered for a whole window.
 */
function flapping(after: EndpointAlertsState, check: CheckRecordedData, transition: EndpointAlertsEvent[], settings: SignalSettings): EndpointAlertsEvent[] {
  const flap = flapOf(after);
  // Most checks change nothing on an endpoint that is not flapping: nothing to parse or build.
  if (transition.length === 0 && !flap.flapping) return transition;
  const { flap_threshold: threshold, flap_window_seconds: windowSeconds } = alertRelations(settings);
  const at = Date.parse(check.checked_at);
  const base = { ...signalIds(check), signal: 'availability' as const, check_id: check.check_id, at: check.checked_at, window_seconds: windowSeconds };
  if (transition.length === 0) {
    const signal = after.signals.availability;
    const recoveredFor = signal.since === null ? 0 : at - Date.parse(signal.since);
    if (signal.state === 'ok' && recoveredFor >= windowSeconds * 1000) return [{ type: ALERT_SIGNAL_FLAPPING_STOPPED, data: base }];
    return [];
  }
  const changes = [...flap.changes, check.checked_at].filter((change) => at - Date.parse(change) < windowSeconds * 1000).length;
  const starts = !flap.flapping && changes >= threshold;
  if (!flap.flapping && !starts) return transition;
  const marked = transition.map((event) => ({ ...event, data: { ...event.data, flapping: true } }) as EndpointAlertsEvent);
  return starts ? [...marked, { type: ALERT_SIGNAL_FLAPPING_STARTED, data: { ...base, changes } }] : marked;
}

/** Availability changes are remembered for flapping (the newest MAX_FLAP_CHANGES). */
function withChange(state: EndpointAlertsState, data: { signal: SignalType; at: string }): EndpointAlertsState {
  if (data.signal !== 'availability') return state;
  const flap = flapOf(state);
  return { ...state, flap: { ...flap, changes: keepLast(flap.changes, data.at, MAX_FLAP_CHANGES) } };
}

// ---------------------------------------------------------------------------------------------
// Regions

/** Only the windows of a state (a region keeps these, not the endpoint's signals or job ids). */
function windowsOf(state: CheckWindows): CheckWindows {
  const { baselineSamples, baselineUpdatedAt, availabilityFailures, consecutiveSuccesses, latencyExceeded, consecutiveUnder } = state;
  return { baselineSamples, baselineUpdatedAt, availabilityFailures, consecutiveSuccesses, latencyExceeded, consecutiveUnder };
}

/** The state as one region sees it: its windows and signals in place of the endpoint's. */
function regionView(state: EndpointAlertsState, region: string): EndpointAlertsState {
  const stored = state.regionWindows?.[region];
  const windows = stored ? windowsOf(stored) : EMPTY_WINDOWS;
  return { ...state, ...windows, signals: { ...state.signals, ...(state.regionSignals?.[region] ?? initialRegionSignals()) } };
}

function initialRegionSignals(): Record<QuorumSignal, SignalState> {
  return { availability: initialSignal('availability'), latency: initialSignal('latency') };
}

function regionQuorum(settings: AlertSettings, regions: readonly string[]): number {
  return settings.region_quorum ?? Math.ceil(regions.length / 2);
}

/**
 * Each region as at `at` (epoch ms): known when its newest counted check is at most
 * `regionHorizonMs` old, and which of its signals are triggered.
 */
function observeRegions(state: EndpointAlertsState, regions: readonly string[], at: number, settings: AlertSettings): Array<Omit<RegionObservation, 'failing'> & { failing: Record<QuorumSignal, boolean> }> {
  const horizonMs = regionHorizonMs(settings.interval_seconds ?? 60);
  return regions.map((name) => {
    const last = state.regionWindows?.[name]?.lastCheckedAt;
    const signals = state.regionSignals?.[name];
    return {
      name,
      known: last !== undefined && at - Date.parse(last) <= horizonMs,
      failing: { availability: signals?.availability.state === 'triggered', latency: signals?.latency.state === 'triggered' },
    };
  });
}

/**
 * A regional check: its region's transitions by the usual rules on the region's windows, then
 * the endpoint's signals by the quorum over every region as at the check, its availability
 * changes through the endpoint's flapping rule.
 */
function regionalTransitions(after: EndpointAlertsState, check: CheckRecordedData, settings: AlertSettings, regions: readonly string[]): EndpointAlertsEvent[] {
  const region = check.region ?? DEFAULT_REGION;
  if (!regions.includes(region)) return [];
  const rules = alertRulesFrom(settings);
  const view = regionView(after, region);
  const events: EndpointAlertsEvent[] = [...availabilityTransition(view, check, rules), ...latencyTransition(view, check, rules)].map((event) => {
    const { signal, threshold_ms } = event.data as AlertSignalTriggeredData & { signal: QuorumSignal };
    const data: RegionSignalData = { ...signalIds(check), region, signal, check_id: check.check_id, at: check.checked_at };
    if (threshold_ms !== undefined) data.threshold_ms = threshold_ms;
    return event.type === ALERT_SIGNAL_TRIGGERED ? { type: REGION_SIGNAL_TRIGGERED, data } : { type: REGION_SIGNAL_RECOVERED, data };
  });
  const next = events.reduce(evolve, after);
  const observed = observeRegions(next, regions, Date.parse(check.checked_at), settings);
  const quorum = regionQuorum(settings, regions);
  const decided: Record<QuorumSignal, EndpointAlertsEvent[]> = { availability: [], latency: [] };
  for (const signal of QUORUM_SIGNALS) {
    const { evidence, triggered: down } = quorumDecision(observed.map((observation) => ({ ...observation, failing: observation.failing[signal] })), quorum);
    const state = next.signals[signal].state;
    if (state === 'ok' && down) {
      const threshold = signal === 'latency' && check.latency_anomaly && check.latency_threshold_ms !== null ? check.latency_threshold_ms : undefined;
      const event = triggered(check, signal, threshold);
      (event.data as AlertSignalTriggeredData).regions = evidence;
      decided[signal].push(event);
    } else if (state === 'triggered' && !down) {
      const event = recovered(check, signal);
      (event.data as AlertSignalRecoveredData).regions = evidence;
      decided[signal].push(event);
    }
  }
  // The quorum's availability changes are the endpoint's: the same flapping rule applies to them.
  return [...events, ...flapping(next, check, decided.availability, settings), ...decided.latency];
}

function triggered(check: CheckRecordedData, signal: SignalType, thresholdMs?: number): EndpointAlertsEvent {
  const data: AlertSignalTriggeredData = { ...signalIds(check), signal, check_id: check.check_id, at: check.checked_at };
  if (thresholdMs !== undefined) data.threshold_ms = thresholdMs;
  return { type: ALERT_SIGNAL_TRIGGERED, data };
}

function recovered(check: CheckRecordedData, signal: SignalType): EndpointAlertsEvent {
  return {
    type: ALERT_SIGNAL_RECOVERED,
    data: { ...signalIds(check), signal, check_id: check.check_id, at: check.checked_at },
  };
}

function signalIds(check: CheckRecordedData) {
  return { endpoint_id: check.endpoint_id, team_id: check.team_id, project_id: check.project_id };
}

function withSignal(state: EndpointAlertsState, signal: SignalState): EndpointAlertsState {
  return { ...state, signals: { ...state.signals, [signal.type]: signal } };
}

/** The newest `max` of `items` followed by `item`, in one new array (the flapping changes: an array in every stored form, changed only with the signal). */
function keepLast<T>(items: readonly T[], item: T, max: number): T[] {
  const from = Math.max(0, items.length + 1 - max);
  const next = new Array<T>(items.length - from + 1);
  for (let i = from; i < items.length; i++) next[i - from] = items[i];
  next[next.length - 1] = item;
  return next;
}

/** How many of the newest `n` (at most MAX_SIGNAL_WINDOW) are true, without copying them. */
function countTrueInLast(items: RecentValues<boolean>, n: number): number {
  if (n <= 0) return 0;
  let count = 0;
  for (let i = Math.max(0, items.length - Math.min(n, MAX_SIGNAL_WINDOW)); i < items.length; i++) if (items.at(i)) count++;
  return count;
}
