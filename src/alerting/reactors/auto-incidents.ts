/**
 * Automatic incidents: a reactor over the event log (api-decisions: Alerting), run by the
 * processor runner like every projection (lease, live batches, fenced checkpoint).
 *
 * - AlertSignalTriggered opens an automatic incident for the endpoint and signal (or joins the
 *   one still open for that pair) and appends AlertSignalIncidentLinked to the endpoint's alerts
 *   stream (alerting's own; the check stream holds only checks).
 *   A new incident starts at the first failure of the run that led to the trigger: every
 *   counted failing check since the last success is linked to it, oldest first, in the same
 *   append as the opening (its incident.opened notification counts them).
 * - Every further counted failing check (availability) or over-threshold check (latency) is
 *   linked to the open incident, which bumps error_count and last_error_at. When that incident
 *   was closed under a signal still triggered, the outage goes on in another (docs/decisions.md,
 *   "Alerting and automatic incidents"): merged away, in the open incident it was merged into
 *   (followed through merges); resolved by a person (or its merge target resolved), in a new
 *   automatic incident that this check opens. The signal is linked to it (alert status names it).
 * - AlertSignalRecovered resolves the incident when auto_resolve is true; with auto_resolve
 *   off it stays open and the next trigger joins it.
 * - Flapping (the decider marks availability changes `flapping` while the endpoint flaps): a
 *   flapping recovery leaves the incident open; a flapping trigger with no open incident
 *   re-opens the endpoint's last automatic one when it was auto-resolved within the flap window
 *   (kept as `recent:<endpoint>:<signal>`); AlertSignalFlappingStarted sets
 *   `metadata.flapping: true` on the open incident (one incident.updated), and
 *   AlertSignalFlappingStopped resolves it as a recovery would.
 * - Grouping (project setting `incident_grouping_seconds`, 0 off): a trigger that would open a
 *   new incident joins instead the project's open automatic incident of the same signal whose
 *   trigger came at most that many seconds earlier (IncidentEndpointJoined, with the run's
 *   checks). A grouped incident records each endpoint's recovery and resolves when the last
 *   one recovers; an endpoint that triggers again while it is open joins it again.
 * - A failing check suppressed by the endpoints it depends on (`suppressed_by`) adds its
 *   endpoint to each such parent's open availability incident, `metadata.suppressed_endpoint_ids`.
 *   A merge (IncidentsAbsorbed) lists the sources' suppressed dependents on the target too.
 *
 * The open incident per endpoint+signal is the reactor's state (collection `open`), committed
 * with its checkpoint. Effects on the log are idempotent, so a batch handled again (after a crash,
 * or by a paused process that lost its lease) changes nothing: the incident id of a trigger is
 * claimed once in the stream `alerting-trigger-<event id>` (expected revision: no stream), the
 * incident is opened only when its stream is empty, links are deduplicated by check id, the
 * signal link is appended only while the alerts stream does not have it, and resolving twice is
 * a no-op.
 */
import { regionReason } from '../domain/regions.js';
import { INCIDENTS_ABSORBED, toLinkedCheck, type IncidentsAbsorbedData } from '../../incidents/domain/events.js';
import type { Incident, IncidentCommand } from '../../incidents/domain/incident.js';
import { AutomaticIncidentWriter, isOpen } from '../../incidents/application/automatic-incidents.js';
import { CHECK_RECORDED, checksStream, type CheckRecordedData } from '../../checks/domain/check.js';
import { endpointSnapshotAggregate } from '../../monitoring/domain/endpoint-snapshot.js';
import { alertRelations } from '../../monitoring/domain/endpoint-configuration.js';
import { ENDPOINT_DELETED, endpointStream, projectStream, type EndpointDeletedData } from '../../monitoring/domain/events.js';
import { incidentGroupingSeconds, projectAggregate, type ProjectState } from '../../monitoring/domain/project.js';
import { systemContext, type CommandContext } from '../../platform/es/command-context.js';
import { StreamCache } from '../../platform/es/stream-cache.js';
import { runStreamCommand, type Aggregate } from '../../platform/es/stream-command.js';
import type { NewEvent, RecordedEvent } from '../../platform/event-store/event-store.port.js';
import type { Platform } from '../../platform/platform.js';
import { defineProjection, type AdoptedState, type Projection } from '../../platform/projections/projection.js';
import type { ViewTransaction } from '../../platform/projections/projection.js';
import type { ReadStore } from '../../platform/read-store/read-store.port.js';
import {
  alertRulesFrom,
  ALERT_SIGNAL_INCIDENT_LINKED,
  ALERT_SIGNAL_RECOVERED,
  ALERT_SIGNAL_TRIGGERED,
  ALERT_SIGNAL_FLAPPING_STARTED,
  ALERT_SIGNAL_FLAPPING_STOPPED,
  ALERT_SIGNALS_CARRIED_OVER,
  alertsStream,
  countsForAlerting,
  daysLeft,
  SIGNAL_TYPES,
  type AlertSignalFlappingData,
  type AlertSignalIncidentLinkedData,
  type AlertSignalRecoveredData,
  type AlertSignalsCarriedOverData,
  type AlertSignalTriggeredData,
  type SignalType,
} from '../domain/endpoint-alerts.js';
import { EndpointAlertsFold } from '../application/endpoint-alerts-fold.js';

export const AUTO_INCIDENTS = 'alerting_incidents';
const OPEN = 'open';
/** Per project and signal: the newest automatic incident opened and its trigger's time (grouping). */
const GROUPS = 'groups';
/** Where the reactor kept its state before it ran on the processor runner (adopted once). */
const LEGACY_COLLECTION = 'alerting_reactor';
const FOLDED_STREAMS = 1_000;
/** How far back a trigger looks for the failures of its run. */
const RUN_LOOKBACK = 1_000;
/** Merges followed from a closed incident to the one holding its outage now (a chain of merges is short; merges make no cycles). */
const MAX_MERGE_HOPS = 100;
/** Attempts of the alerts stream's link append (the reactor is not answering anyone: it waits its turn). */
const COMMAND_ATTEMPTS = 20;

const TITLES: Record<SignalType, (name: string) => string> = {
  availability: (name) => `${name} is unavailable`,
  latency: (name) => `${name} is responding slowly`,
  certificate: (name) => `${name}'s TLS certificate expires soon`,
};

/** Why the signal triggered, in words (the incident's detection_reason). */
function detectionReason(data: AlertSignalTriggeredData, trigger: CheckRecordedData | null): string {
  switch (data.signal) {
    case 'availability':
      return `Availability signal triggered by check ${data.check_id}${trigger?.failure_reason ? `: ${trigger.failure_reason}` : ''}`;
    case 'latency':
      return `Latency signal triggered by check ${data.check_id}${data.threshold_ms !== undefined ? ` over ${data.threshold_ms} ms` : ''}`;
    case 'certificate': {
      const expiresAt = data.expires_at ?? '';
      const left = daysLeft(expiresAt, data.at);
      return `TLS certificate expires at ${expiresAt} (${left} ${left === 1 ? 'day' : 'days'} left, warning threshold ${data.threshold_days ?? '?'} days), seen by check ${data.check_id}`;
    }
  }
}

/** The dependents an incident lists as suppressed by its endpoint's outage (`metadata.suppressed_endpoint_ids`). */
function suppressedListOf(incident: Pick<Incident, 'metadata'> | null): number[] {
  const listed = incident?.metadata.suppressed_endpoint_ids;
  return Array.isArray(listed) ? (listed as number[]) : [];
}

/** The change listing `dependentIds` too (ascending, each once); null when every one is listed already. */
function listingSuppressed(incident: Incident, dependentIds: readonly number[]): IncidentCommand | null {
  const listed = suppressedListOf(incident);
  const added = dependentIds.filter((id) => !listed.includes(id));
  if (added.length === 0) return null;
  return { kind: 'update_details', changes: { metadata: { ...incident.metadata, suppressed_endpoint_ids: [...listed, ...added].sort((a, b) => a - b) } } };
}

/** The automatic-incident reactor of this process; started by the alerting context. */
export function autoIncidentsReactor(platform: Platform): Projection {
  const reactor = new AutoIncidents(platform);
  return defineProjection({
    kind: 'reactor',
    name: AUTO_INCIDENTS,
    version: 1,
    collections: [
      { name: OPEN, indexes: [] },
      { name: GROUPS, indexes: [] },
    ],
    adopt: adoptLegacyState,
    handlers: {
      [ALERT_SIGNAL_TRIGGERED]: (event, views) => reactor.passOverRefused(event, () => reactor.onTriggered(event as RecordedEvent<AlertSignalTriggeredData>, views)),
      [ALERT_SIGNAL_RECOVERED]: (event, views) => reactor.passOverRefused(event, () => reactor.onRecovered(event as RecordedEvent<AlertSignalRecoveredData>, views)),
      [CHECK_RECORDED]: (event, views) => reactor.passOverRefused(event, () => reactor.onCheck(event as RecordedEvent<CheckRecordedData>, views)),
      [ALERT_SIGNAL_FLAPPING_STARTED]: (event, views) => reactor.passOverRefused(event, () => reactor.onFlappingStarted(event.data as AlertSignalFlappingData, views)),
      [ALERT_SIGNAL_FLAPPING_STOPPED]: (event, views) => reactor.passOverRefused(event, () => reactor.onRecovered(event as RecordedEvent<AlertSignalFlappingData>, views)),
      [ENDPOINT_DELETED]: (event, views) => reactor.passOverRefused(event, () => reactor.onEndpointDeleted(event.data as EndpointDeletedData, views)),
      [INCIDENTS_ABSORBED]: (event) => reactor.passOverRefused(event, () => reactor.onAbsorbed(event.data as IncidentsAbsorbedData)),
    },
  });
}

class AutoIncidents {
  private readonly incidents: AutomaticIncidentWriter;
  private readonly endpoints: StreamCache<ReturnType<typeof endpointSnapshotAggregate.initial>>;
  private readonly alertsFold: EndpointAlertsFold;
  private readonly projects: StreamCache<ProjectState>;

  constructor(private readonly platform: Platform) {
    this.projects = new StreamCache(platform.events, projectAggregate.initial, projectAggregate.evolve, FOLDED_STREAMS);
    this.incidents = new AutomaticIncidentWriter(platform);
    this.endpoints = new StreamCache(platform.events, endpointSnapshotAggregate.initial, endpointSnapshotAggregate.evolve, FOLDED_STREAMS);
    this.alertsFold = new EndpointAlertsFold(platform.events);
  }

  /** A refused incident change (merged away, for instance) is logged and passed over. */
  passOverRefused(event: RecordedEvent, handle: () => Promise<void>): Promise<void> {
    return this.incidents.passOverRefused(event.id, handle);
  }

  async onCheck(event: RecordedEvent<CheckRecordedData>, views: ViewTransaction): Promise<void> {
    const check = event.data;
    if (check.suppressed_by !== undefined && !check.success) {
      for (const parentId of check.suppressed_by) await this.noteSuppressed(parentId, check.endpoint_id, views);
    }
    if (!countsForAlerting(check)) return;
    if (!check.success) await this.linkToOpen(event, 'availability', views);
    if (check.success && check.latency_anomaly) await this.linkToOpen(event, 'latency', views);
  }

  private async linkToOpen(event: RecordedEvent<CheckRecordedData>, signal: SignalType, views: ViewTransaction): Promise<void> {
    const check = event.data;
    const open = await openIncident(views, check.endpoint_id, signal);
    if (open === null) return;
    const state = await this.incidents.command(open, { kind: 'link_check', check: toLinkedCheck(check) }, systemContext('alerting'));
    // The common case ends here: the link landed. Only a closed incident costs more reads.
    if (state === null || isOpen(state)) return;
    await this.carryOutage(event, signal, state, views);
  }

  /**
   * The incident holding the signal's outage was closed while the signal stays triggered. The
   * check goes to the incident that now holds the outage, followed through merges: while that
   * one is open, it is linked there; once it was resolved at or before the check was taken, the
   * check opens a new automatic incident (claimed once per check event, so a batch handled
   * again opens nothing more). Either becomes the signal's open incident and is linked to the
   * signal. A check taken before that resolution belonged to it: passed over, as any link to a
   * closed incident. Deciding by the stored times, not by when this reactor runs, makes every
   * reactor (a late one, or two with no coordination) decide the same for the same check.
   */
  private async carryOutage(event: RecordedEvent<CheckRecordedData>, signal: SignalType, closed: Incident, views: ViewTransaction): Promise<void> {
    const check = event.data;
    // The incident may be one the signal no longer holds: a grouped incident resolved by the
    // others after this endpoint recovered, or one kept open by auto_resolve off. A failing
    // check after its recovery is no outage until the signal triggers again (which opens or
    // joins the right incident), so it opens nothing and the stale entry goes.
    if (!(await this.triggeredBefore(check.endpoint_id, signal, event.revision))) {
      views.delete(OPEN, openKey(check.endpoint_id, signal));
      return;
    }
    const context = systemContext('alerting', event.id, event.id);
    const holder = await this.outageHolder(closed);
    let incidentId: number;
    if (holder.resolved_at === null) {
      incidentId = holder.id;
      await this.incidents.command(incidentId, { kind: 'link_check', check: toLinkedCheck(check) }, context);
    } else if (Date.parse(holder.resolved_at) <= Date.parse(check.checked_at)) {
      incidentId = await this.incidents.claimIncidentId(`alerting-outage-${event.id}`, event.id, context);
      await this.openAfterClosed(incidentId, signal, check, holder, context);
    } else {
      return;
    }
    views.put(OPEN, { id: openKey(check.endpoint_id, signal), incident_id: incidentId });
    await this.linkSignal(check.endpoint_id, signal, incidentId, context, await this.lastTriggerRevision(check.endpoint_id, signal) + 1, true);
  }

  /** The incident `closed` was merged into, followed through merges (itself when not merged). */
  private async outageHolder(closed: Incident): Promise<Incident> {
    let holder = closed;
    for (let hops = 0; hops < MAX_MERGE_HOPS && holder.merged_into_id !== null; hops++) {
      const target = await this.incidents.load(holder.merged_into_id);
      if (target === null) break;
      holder = target;
    }
    return holder;
  }

  /** Opens the outage's new automatic incident with `check` as its first linked check. */
  private async openAfterClosed(incidentId: number, signal: SignalType, check: CheckRecordedData, closed: Incident, context: CommandContext): Promise<void> {
    const endpoint = (await this.endpoints.load(endpointStream(check.endpoint_id))).state;
    const name = endpoint?.name ?? `Endpoint ${check.endpoint_id}`;
    const failure = signal === 'availability' ? (check.failure_reason ? `: ${check.failure_reason}` : '') : check.latency_threshold_ms !== null ? ` over ${check.latency_threshold_ms} ms` : '';
    await this.incidents.open(incidentId, check.team_id, context, (status): IncidentCommand => ({
      kind: 'open_automatic',
      incident_id: incidentId,
      team_id: check.team_id,
      project_id: check.project_id,
      endpoint_id: check.endpoint_id,
      signal,
      title: TITLES[signal](name),
      detection_reason: `${signal === 'availability' ? 'Availability' : 'Latency'} signal still triggered after incident ${closed.id} was resolved; check ${check.check_id}${failure}`,
      status,
      checks: [toLinkedCheck(check)],
    }));
  }

  /** The alerts stream's revision of the signal's latest trigger (at or before `atOrBefore` when given); -1 when it holds none (signals recorded in the check stream, before alerts-<id>). */
  private async lastTriggerRevision(endpointId: number, signal: SignalType, atOrBefore?: number): Promise<number> {
    for await (const recorded of this.newestFirst(alertsStream(endpointId), atOrBefore)) {
      if (recorded.type === ALERT_SIGNAL_TRIGGERED && (recorded.data as AlertSignalTriggeredData).signal === signal) return recorded.revision;
    }
    return -1;
  }

  /**
   * Whether the signal was triggered when the check at `checkRevision` (of the check stream) was
   * recorded: the newest of its transitions decided on an earlier check says, or else the
   * signals the alerts stream started with. Read from the log alone, so every reactor (a late
   * one, or two with no coordination) decides the same for the same check. An endpoint whose
   * alerts stream holds neither counts as triggered, as before this was asked.
   */
  private async triggeredBefore(endpointId: number, signal: SignalType, checkRevision: number): Promise<boolean> {
    for await (const recorded of this.newestFirst(alertsStream(endpointId))) {
      if (recorded.type === ALERT_SIGNALS_CARRIED_OVER) {
        return (recorded.data as AlertSignalsCarriedOverData).signals.some((carried) => carried.type === signal && carried.state === 'triggered');
      }
      if (recorded.type !== ALERT_SIGNAL_TRIGGERED && recorded.type !== ALERT_SIGNAL_RECOVERED) continue;
      const transition = recorded.data as AlertSignalTriggeredData | AlertSignalRecoveredData;
      if (transition.signal === signal && transition.check_revision !== undefined && transition.check_revision < checkRevision) return recorded.type === ALERT_SIGNAL_TRIGGERED;
    }
    return true;
  }

  /** The stream's events, newest first (from `fromRevision` when given), read a page at a time. */
  private async *newestFirst(stream: string, fromRevision?: number): AsyncGenerator<RecordedEvent> {
    for (;;) {
      const page = await this.platform.events.readStream(stream, { direction: 'backwards', ...(fromRevision === undefined ? {} : { fromRevision }), maxCount: RUN_LOOKBACK });
      yield* page;
      if (page.length < RUN_LOOKBACK || page[page.length - 1].revision === 0) return;
      fromRevision = page[page.length - 1].revision - 1;
    }
  }

  /**
   * A failing check of `dependentId` was suppressed because `parentId` is down: the parent's open
   * availability incident lists the dependent in `metadata.suppressed_endpoint_ids` (once; an
   * incident.updated the first time). The parent's trigger precedes the check in the log (the
   * recorder read it before recording), so its incident is already open here. Merged away, the
   * incident the parent's outage went to (followed through merges, as a check of the parent's
   * own is) lists it: the parent's next check moves the reactor there, the dependent's may come
   * first.
   */
  private async noteSuppressed(parentId: number, dependentId: number, views: ViewTransaction): Promise<void> {
    const open = await openIncident(views, parentId, 'availability');
    if (open === null) return;
    const kept = await this.incidents.load(open);
    const holder = kept ? (await this.outageHolder(kept)).id : open;
    await this.incidents.change(holder, systemContext('alerting'), (state) => (isOpen(state) ? listingSuppressed(state, [dependentId]) : null));
  }

  /**
   * A merge moved its sources' content into the target (IncidentsAbsorbed): the dependents a
   * source listed in `metadata.suppressed_endpoint_ids` are listed on the target too (the union;
   * the incidents domain's merge leaves metadata alone, an alerting field). Merged on since, the
   * incident the target went to lists them. Read from the sources' own streams: a merged-away
   * incident takes no more writes, so each still holds what it listed at the merge.
   */
  async onAbsorbed(data: IncidentsAbsorbedData): Promise<void> {
    const listed = new Set<number>();
    for (const source of data.sources) for (const id of suppressedListOf(await this.incidents.load(source.id))) listed.add(id);
    if (listed.size === 0) return;
    const target = await this.incidents.load(data.incident_id);
    if (target === null) return;
    const holder = await this.outageHolder(target);
    await this.incidents.change(holder.id, systemContext('alerting'), (state) => listingSuppressed(state, [...listed]));
  }

  async onTriggered(event: RecordedEvent<AlertSignalTriggeredData>, views: ViewTransaction): Promise<void> {
    const data = event.data;
    const run = await this.runOfTrigger(event);
    let incidentId = await openIncident(views, data.endpoint_id, data.signal);
    if (incidentId !== null) {
      const state = await this.incidents.load(incidentId);
      if (!state || !isOpen(state)) incidentId = null;
    }
    const context = systemContext('alerting', event.id, event.id);
    if (incidentId === null && data.flapping) incidentId = await this.reopenRecent(data, views, context);
    if (incidentId === null) incidentId = await this.openOrJoin(event, run, context, views);
    else if ((await this.incidents.load(incidentId))?.awaiting_recovery !== undefined) {
      // An endpoint of a grouped incident that triggers again waits for its recovery again.
      await this.incidents.command(incidentId, await this.joinCommand(event, run), context);
    }
    for (const check of run) await this.incidents.command(incidentId, { kind: 'link_check', check: toLinkedCheck(check) }, context);
    views.put(OPEN, { id: openKey(data.endpoint_id, data.signal), incident_id: incidentId });
    // Only what followed the trigger matters; a trigger from the check stream (a data dir from
    // before alerts-<id>) came before all of the alerts stream.
    const inAlertsStream = event.streamId === alertsStream(data.endpoint_id);
    await this.linkSignal(data.endpoint_id, data.signal, incidentId, context, inAlertsStream ? event.revision + 1 : 0, !inAlertsStream);
  }

  /**
   * The checks that led to the trigger, oldest first: among the last `trigger_window` counted
   * checks up to the triggering one, those that failed (availability) or were anomalous
   * (latency), as the signal's rule counted them.
   */
  private async runOfTrigger(event: RecordedEvent<AlertSignalTriggeredData>): Promise<CheckRecordedData[]> {
    const { endpoint_id: endpointId, signal, check_id: checkId } = event.data;
    // A certificate about to expire is no failure: no check is linked for it.
    if (signal === 'certificate') return [];
    const endpoint = (await this.endpoints.load(endpointStream(endpointId))).state;
    const window = endpoint ? alertRulesFrom(endpoint.configuration).trigger_window : 1;
    // The trigger names its check's revision; one recorded in the check stream itself (a data
    // dir from before alerts-<id>) sits right after its check.
    const fromRevision = event.data.check_revision ?? (event.streamId === checksStream(endpointId) ? event.revision : undefined);
    const recent = await this.platform.events.readStream(checksStream(endpointId), {
      direction: 'backwards',
      ...(fromRevision === undefined ? {} : { fromRevision }),
      maxCount: RUN_LOOKBACK,
    });
    const run: CheckRecordedData[] = [];
    let counted = 0;
    for (const recorded of recent) {
      if (recorded.type !== CHECK_RECORDED) continue;
      const check = recorded.data as CheckRecordedData;
      if (counted === 0 && check.check_id !== checkId) continue;
      if (!countsForAlerting(check)) continue;
      if (signal === 'availability' ? !check.success : check.success && check.latency_anomaly === true) run.push(check);
      if (++counted >= window) break;
    }
    return run.reverse();
  }

  /**
   * Opens the trigger's incident, or joins the project's group (see the header). Which one is
   * fixed by the trigger's claim, so a batch handled again joins or opens the same incident.
   */
  private async openOrJoin(event: RecordedEvent<AlertSignalTriggeredData>, run: CheckRecordedData[], context: CommandContext, views: ViewTransaction): Promise<number> {
    const data = event.data;
    const incidentId = await this.incidents.claimIncidentId(`alerting-trigger-${event.id}`, event.id, context, await this.groupToJoin(data, views));
    const state = await this.incidents.load(incidentId);
    if (state !== null && state.id === incidentId && state.endpoint_ids[0] !== data.endpoint_id) {
      await this.incidents.command(incidentId, await this.joinCommand(event, run), context);
      return incidentId;
    }
    await this.openNew(event, run, context, incidentId);
    views.put(GROUPS, { id: groupKey(data.project_id, data.signal), incident_id: incidentId, triggered_at: data.at });
    return incidentId;
  }

  /** The open automatic incident this trigger joins under its project's grouping, or null. */
  private async groupToJoin(data: AlertSignalTriggeredData, views: ViewTransaction): Promise<number | null> {
    const seconds = incidentGroupingSeconds((await this.projects.load(projectStream(data.project_id))).state);
    if (seconds <= 0) return null;
    const group = await views.get(GROUPS, groupKey(data.project_id, data.signal));
    if (!group || Date.parse(data.at) - Date.parse(String(group.triggered_at)) > seconds * 1000) return null;
    const incidentId = Number(group.incident_id);
    const state = await this.incidents.load(incidentId);
    const open = state !== null && state.source === 'automatic' && isOpen(state);
    return open && state.project_id === data.project_id ? incidentId : null;
  }

  private async joinCommand(event: RecordedEvent<AlertSignalTriggeredData>, run: CheckRecordedData[]): Promise<IncidentCommand> {
    const data = event.data;
    const trigger = run.find((check) => check.check_id === data.check_id) ?? null;
    const endpoint = (await this.endpoints.load(endpointStream(data.endpoint_id))).state;
    const name = endpoint?.name ?? `Endpoint ${data.endpoint_id}`;
    return { kind: 'join_automatic', endpoint_id: data.endpoint_id, signal: data.signal, reason: `${name}: ${detectionReason(data, trigger)}`, checks: run.map(toLinkedCheck) };
  }

  private async openNew(event: RecordedEvent<AlertSignalTriggeredData>, run: CheckRecordedData[], context: CommandContext, incidentId: number): Promise<void> {
    const data = event.data;
    const endpoint = (await this.endpoints.load(endpointStream(data.endpoint_id))).state;
    const name = endpoint?.name ?? `Endpoint ${data.endpoint_id}`;
    const trigger = run.find((check) => check.check_id === data.check_id) ?? null;
    const reason = data.regions !== undefined ? regionReason(data.regions) : detectionReason(data, trigger);
    await this.incidents.open(incidentId, data.team_id, context, (status): IncidentCommand => ({
      kind: 'open_automatic',
      incident_id: incidentId,
      team_id: data.team_id,
      project_id: data.project_id,
      endpoint_id: data.endpoint_id,
      signal: data.signal,
      title: TITLES[data.signal](name),
      detection_reason: reason,
      ...(data.regions === undefined ? {} : { metadata: { regions: { failing: data.regions.failing, up: data.regions.up, unknown: data.regions.unknown } } }),
      status,
      checks: run.map(toLinkedCheck),
    }));
  }

  /**
   * Records on the alerts stream which incident the triggered signal belongs to, once: nothing
   * when a link to it follows `fromRevision` (the signal's trigger). An empty alerts stream starts
   * with the signals the check stream's events left when `carryOver` (the trigger was not in it).
   */
  private async linkSignal(endpointId: number, signal: SignalType, incidentId: number, context: CommandContext, fromRevision: number, carryOver: boolean): Promise<void> {
    // fromRevision follows the trigger on the alerts stream (0: no trigger there, nothing to name).
    const link: AlertSignalIncidentLinkedData = { endpoint_id: endpointId, signal, incident_id: incidentId, ...(fromRevision > 0 ? { trigger_revision: fromRevision - 1 } : {}) };
    const linkedSinceTrigger: Aggregate<boolean> = {
      initial: () => false,
      evolve: (linked, recorded) => {
        const data = recorded.data as AlertSignalIncidentLinkedData;
        return linked || (recorded.type === ALERT_SIGNAL_INCIDENT_LINKED && data.signal === signal && data.incident_id === incidentId);
      },
    };
    await runStreamCommand(
      this.platform.events,
      alertsStream(endpointId),
      linkedSinceTrigger,
      context,
      async (linked, loaded) => {
        if (linked) return { events: [], result: null };
        const events: NewEvent[] = [{ type: ALERT_SIGNAL_INCIDENT_LINKED, data: link }];
        if (loaded.revision === -1 && carryOver) events.unshift(await this.alertsFold.carryOver(endpointId));
        return { events, result: null };
      },
      { fromRevision, attempts: COMMAND_ATTEMPTS },
    );
  }

  /** A recovery (not while flapping), or the end of flapping: resolves the signal's incident when auto_resolve is on. */
  async onRecovered(event: RecordedEvent<AlertSignalRecoveredData | AlertSignalFlappingData>, views: ViewTransaction): Promise<void> {
    const data = event.data;
    if ('flapping' in data && data.flapping) return;
    const open = await openIncident(views, data.endpoint_id, data.signal);
    const incidentId = (await this.linkedIncident(event)) ?? open;
    if (incidentId === null) return;
    const state = await this.incidents.command(incidentId, { kind: 'resolve_on_recovery', endpoint_id: data.endpoint_id }, systemContext('alerting'));
    // The view moves on only when it still names this incident (an unfenced reactor handling an
    // old recovery late must not forget a later trigger's incident).
    if ((state === null || !isOpen(state)) && open === incidentId) {
      views.delete(OPEN, openKey(data.endpoint_id, data.signal));
      if (state?.resolved_at) views.put(OPEN, { id: recentKey(data.endpoint_id, data.signal), incident_id: incidentId });
    }
  }

  /**
   * The incident the alerts stream links to the outage a recovery ends: the newest link naming
   * the signal's latest trigger before the recovery. Read from the log, so a reactor handling
   * the recovery late (two with no coordination) resolves the same incident as the first, not
   * the one its shared view names by then. Null when no link names it (links recorded before
   * they named their trigger, or signals in the check stream): the view decides, as before.
   */
  private async linkedIncident(recovery: RecordedEvent<AlertSignalRecoveredData | AlertSignalFlappingData>): Promise<number | null> {
    const { endpoint_id: endpointId, signal } = recovery.data;
    const stream = alertsStream(endpointId);
    if (recovery.streamId !== stream) return null;
    const trigger = await this.lastTriggerRevision(endpointId, signal, recovery.revision);
    if (trigger < 0) return null;
    let linked: number | null = null;
    for (const recorded of await this.platform.events.readStream(stream, { fromRevision: trigger + 1 })) {
      const link = recorded.data as AlertSignalIncidentLinkedData;
      if (recorded.type === ALERT_SIGNAL_INCIDENT_LINKED && link.signal === signal && link.trigger_revision === trigger) linked = link.incident_id;
    }
    return linked;
  }

  /**
   * The endpoint was deleted: none of its signals will recover, so each incident still waiting
   * for it stops waiting (recorded as such) and resolves when auto_resolve is on and no other
   * endpoint in it is still failing. It never triggers again, so its entries go.
   */
  async onEndpointDeleted(data: EndpointDeletedData, views: ViewTransaction): Promise<void> {
    for (const signal of SIGNAL_TYPES) {
      const incidentId = await openIncident(views, data.endpoint_id, signal);
      if (incidentId === null) continue;
      await this.incidents.command(incidentId, { kind: 'resolve_on_recovery', endpoint_id: data.endpoint_id, endpoint_deleted: true }, systemContext('alerting'));
      views.delete(OPEN, openKey(data.endpoint_id, signal));
    }
  }

  /** The endpoint started flapping: its open incident says so (metadata.flapping, one incident.updated). */
  async onFlappingStarted(data: AlertSignalFlappingData, views: ViewTransaction): Promise<void> {
    const incidentId = await openIncident(views, data.endpoint_id, data.signal);
    if (incidentId === null) return;
    await this.incidents.change(incidentId, systemContext('alerting'), (state) =>
      !isOpen(state) || state.metadata.flapping === true ? null : { kind: 'update_details', changes: { metadata: { ...state.metadata, flapping: true } } },
    );
  }

  /**
   * A flapping trigger with no open incident: the endpoint's last automatic incident for the
   * signal, re-opened, when it was resolved automatically within the flap window; else null.
   * Handling the same trigger again joins the incident it re-opened the first time.
   */
  private async reopenRecent(data: AlertSignalTriggeredData, views: ViewTransaction, context: CommandContext): Promise<number | null> {
    const recent = await views.get(OPEN, recentKey(data.endpoint_id, data.signal));
    if (!recent) return null;
    const incidentId = Number(recent.incident_id);
    const endpoint = (await this.endpoints.load(endpointStream(data.endpoint_id))).state;
    const windowMs = alertRelations(endpoint?.configuration ?? {}).flap_window_seconds * 1000;
    const state = await this.incidents.load(incidentId);
    if (!state || state.merged_into_id !== null) return null;
    // Open again already: this trigger handled a second time (a batch after a crash, another
    // reactor), or a person re-opened it. Either way it is the incident to join.
    if (state.resolved_at === null) return incidentId;
    if (!state.auto_resolve || Date.parse(data.at) - Date.parse(state.resolved_at) > windowMs) return null;
    const reopened = await this.incidents.command(incidentId, { kind: 'update_status', resolved: false }, context);
    return reopened?.resolved_at === null ? incidentId : null;
  }
}

async function openIncident(views: ViewTransaction, endpointId: number, signal: SignalType): Promise<number | null> {
  const doc = await views.get(OPEN, openKey(endpointId, signal));
  return doc ? Number(doc.incident_id) : null;
}

function groupKey(projectId: number, signal: SignalType): string {
  return `${projectId}:${signal}`;
}

function openKey(endpointId: number, signal: SignalType): string {
  return `${endpointId}:${signal}`;
}

/** The endpoint's automatic incident for the signal last resolved on recovery (flapping re-opens it). */
function recentKey(endpointId: number, signal: SignalType): string {
  return `recent:${endpointId}:${signal}`;
}

/**
 * Before the processor runner, the reactor kept its checkpoint and open incidents in the read
 * store collection `alerting_reactor`; a data dir from then goes on where it stopped.
 */
async function adoptLegacyState(store: ReadStore): Promise<AdoptedState | null> {
  if (!(await store.listCollections()).includes(LEGACY_COLLECTION)) return null;
  const checkpoint = await store.get(LEGACY_COLLECTION, 'checkpoint');
  const open = (await store.find(LEGACY_COLLECTION, {})).filter((doc) => String(doc.id).startsWith('open:'));
  return {
    position: checkpoint?.position === undefined || checkpoint.position === null ? null : Number(checkpoint.position),
    docs: open.map((doc) => ({ collection: OPEN, doc: { id: String(doc.id).slice('open:'.length), incident_id: doc.incident_id } })),
  };
}
