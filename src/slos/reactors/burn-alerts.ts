/**
 * Burn-rate alerts: a reactor over the event log, run by the processor runner like every
 * projection (lease, live batches, fenced checkpoint), started at the log's head.
 *
 * - Every live scheduled check (scheduled, unsuppressed, not imported: imports never raise an
 *   alert) of an SLO's endpoints evaluates that SLO's burn rates over the alert windows (5m,
 *   30m, 1h, 6h, counted by analytics once the rollups applied the check) and appends the
 *   transitions the rules call for to the SLO's stream (`decideBurn`, decided on the stream's
 *   state, so a batch handled again appends nothing twice). One SLO is evaluated at most once
 *   per EVALUATION_SPACING_MS: checks of its endpoints arriving closer together are counted by
 *   the next evaluation.
 * - SloBurnAlertTriggered opens an automatic incident (type `slo_burn`; critical for a page,
 *   warning for a ticket; auto_resolve on) and records it on the SLO's stream
 *   (SloBurnIncidentLinked). The incident id of a trigger is claimed once in
 *   `slo-burn-trigger-<event id>`, and the incident is opened only while its stream is empty.
 * - SloBurnAlertRecovered resolves it (as an endpoint signal's recovery does), and so does
 *   SloDeleted for each alert still open: a deleted SLO's alerts end with it, and nothing would
 *   ever recover them, so an auto-resolving incident would stay open for good. With its
 *   auto_resolve turned off the incident records the alert's end and stays open; the reactor
 *   keeps it (unless the SLO was deleted), and the same alert triggering again is awaited in it again
 *   (IncidentAlertTriggeredAgain) rather than opening a second incident. Each transition carries
 *   its revision in the SLO's stream, so a batch handled again changes nothing the incident
 *   recorded since.
 * - EndpointDeleted takes the endpoint out of each of the team's SLOs that list it
 *   (SloEndpointDeleted); the one that leaves an SLO no endpoint ends its alerts, and each
 *   incident they hold open resolves as on a recovery, its history naming the deleted endpoint
 *   (as alerting's endpoint signals do: the incident stops waiting for it). The SLOs are read
 *   from the `slos` view once it applied the deletion, so an SLO created just before it is
 *   found; an SLO created or given endpoints after it (its command checked the endpoints
 *   against a view that did not show the deletion yet) loses them when the reactor takes its
 *   SloCreated or SloUpdated, the endpoints' own streams saying they are gone. Whichever order
 *   the two land in the log, one of the two steps sees both.
 * - EndpointDeleted, and EndpointReconfigured moving an endpoint to another project, leave the
 *   project they took it from with no endpoint at all, maybe: the team's SLOs of that project
 *   then end their active alerts (SloProjectEmptied), and the incidents they hold open resolve
 *   the same way (the history names the endpoint when it was deleted). Whether any endpoint is
 *   left is read from the monitoring view once it applied the event.
 * The open incident per SLO and severity is the reactor's state (collection `open`), committed
 * with its checkpoint.
 */
import { ROLLUPS_PROJECTION } from '../../analytics/views/rollups/view.js';
import { CHECK_RECORDED, isApplicable, type CheckRecordedData } from '../../checks/domain/check.js';
import { AutomaticIncidentWriter, isOpen } from '../../incidents/application/automatic-incidents.js';
import type { AlertTransition, IncidentCommand } from '../../incidents/domain/incident.js';
import { evolveEndpoint, type EndpointSnapshotState } from '../../monitoring/domain/endpoint-snapshot.js';
import { ENDPOINT_DELETED, ENDPOINT_RECONFIGURED, endpointStream, type EndpointDeletedData, type EndpointReconfiguredData } from '../../monitoring/domain/events.js';
import { projectHasEndpoints } from '../../monitoring/views/monitoring/queries.js';
import { ENDPOINTS, MONITORING_VIEW } from '../../monitoring/views/monitoring/view.js';
import { systemContext, type CommandContext } from '../../platform/es/command-context.js';
import { StreamCache } from '../../platform/es/stream-cache.js';
import type { RecordedEvent } from '../../platform/event-store/event-store.port.js';
import type { Platform } from '../../platform/platform.js';
import { defineProjection, type Projection, type ViewTransaction } from '../../platform/projections/projection.js';
import { ALERT_WINDOWS, BURN_RULES, decideBurn, decideIncidentLink } from '../domain/budget.js';
import {
  BURN_SEVERITIES,
  SLO_BURN_ALERT_RECOVERED,
  SLO_BURN_ALERT_TRIGGERED,
  SLO_CREATED,
  SLO_DELETED,
  SLO_ENDPOINT_DELETED,
  SLO_PROJECT_EMPTIED,
  SLO_UPDATED,
  sloStream,
  type BurnSeverity,
  type SloBurnAlertRecoveredData,
  type SloBurnAlertTriggeredData,
  type SloCreatedData,
  type SloDeletedData,
  type SloEndpointDeletedData,
  type SloProjectEmptiedData,
  type SloUpdatedData,
} from '../domain/events.js';
import { decideEndpointDeleted, decideProjectEmptied, sloAggregate, type SloEvent, type SloState } from '../domain/slo.js';
import { decideOnSlo } from '../application/slo-stream.js';
import { SLOS_COLLECTION, SLOS_PROJECTION, type SloDoc } from '../views/slos/view.js';
import { SloCounter } from '../application/slo-figures.js';

export const SLO_BURN_REACTOR = 'slo_burn_alerts';
const OPEN = 'open';
const FOLDED_STREAMS = 1_000;
const COMMAND_ATTEMPTS = 20;
/** At most one evaluation of an SLO per this long (each reads its windows' counts). */
export const EVALUATION_SPACING_MS = 1_000;
/**
 * How long an evaluation waits for the rollups to apply its check, and an endpoint's deletion or
 * move for the views it is read through (see `viewsAt`), before its batch is handled again.
 */
const VIEWS_WAIT_MS = 10_000;

const INCIDENT_SEVERITY: Record<BurnSeverity, 'critical' | 'warning'> = { page: 'critical', ticket: 'warning' };

export function sloBurnReactor(platform: Platform): Projection {
  const reactor = new BurnAlerts(platform);
  return defineProjection({
    kind: 'reactor',
    name: SLO_BURN_REACTOR,
    version: 1,
    startFrom: 'end',
    collections: [{ name: OPEN, indexes: [] }],
    handlers: {
      [CHECK_RECORDED]: (event, views) => reactor.onCheck(event as RecordedEvent<CheckRecordedData>, views),
      [SLO_BURN_ALERT_TRIGGERED]: (event, views) => reactor.passOverRefused(event, () => reactor.onTriggered(event as RecordedEvent<SloBurnAlertTriggeredData>, views)),
      [SLO_BURN_ALERT_RECOVERED]: (event, views) => reactor.passOverRefused(event, () => reactor.onRecovered(event as RecordedEvent<SloBurnAlertRecoveredData>, views)),
      [SLO_DELETED]: (event, views) => reactor.passOverRefused(event, () => reactor.onDeleted(event, views)),
      [ENDPOINT_DELETED]: (event, views) => reactor.onEndpointDeleted(event as RecordedEvent<EndpointDeletedData>, views),
      [SLO_ENDPOINT_DELETED]: (event, views) => reactor.passOverRefused(event, () => reactor.onSloEndpointDeleted(event as RecordedEvent<SloEndpointDeletedData>, views)),
      [ENDPOINT_RECONFIGURED]: (event, views) => reactor.onEndpointReconfigured(event as RecordedEvent<EndpointReconfiguredData>, views),
      [SLO_CREATED]: (event) => reactor.dropDeletedEndpoints(event, (event.data as SloCreatedData).endpoint_ids, (event.data as SloCreatedData).created_at),
      [SLO_UPDATED]: (event) => reactor.dropDeletedEndpoints(event, (event.data as SloUpdatedData).changes.endpoint_ids, (event.data as SloUpdatedData).updated_at),
      [SLO_PROJECT_EMPTIED]: (event, views) => reactor.passOverRefused(event, () => reactor.onProjectEmptied(event as RecordedEvent<SloProjectEmptiedData>, views)),
    },
  });
}

class BurnAlerts {
  private readonly slos: StreamCache<SloState>;
  private readonly endpoints: StreamCache<EndpointSnapshotState>;
  private readonly incidents: AutomaticIncidentWriter;
  private readonly counter: SloCounter;
  private readonly lastEvaluated = new Map<number, number>();
  /** Each team's live SLOs as of the view's stamp `teamsVersion`. */
  private readonly teams = new Map<number, SloDoc[]>();
  private teamsVersion: string | null = null;

  constructor(private readonly platform: Platform) {
    this.slos = new StreamCache(platform.events, sloAggregate.initial, sloAggregate.evolve, FOLDED_STREAMS);
    this.endpoints = new StreamCache<EndpointSnapshotState>(platform.events, () => null, evolveEndpoint, FOLDED_STREAMS);
    this.incidents = new AutomaticIncidentWriter(platform);
    this.counter = SloCounter.of(platform);
  }

  passOverRefused(event: RecordedEvent, handle: () => Promise<void>): Promise<void> {
    return this.incidents.passOverRefused(event.id, handle);
  }

  /** `batch`: the runner's batch, whose checks share one look at other processes' commits (see `slosOfTeam`). */
  async onCheck(event: RecordedEvent<CheckRecordedData>, batch: object): Promise<void> {
    const check = event.data;
    if (!isApplicable(check) || check.imported) return;
    const slos = (await this.slosOfTeam(check.team_id, batch)).filter((slo) => slo.project_id === check.project_id || (slo.endpoint_ids ?? []).includes(check.endpoint_id));
    const now = Date.now();
    const due = slos.filter((slo) => now - (this.lastEvaluated.get(slo.slo_id) ?? -Infinity) >= EVALUATION_SPACING_MS);
    if (due.length === 0) return;
    // The counts must include this check: the rollups are another processor. Counted without it
    // while the rollups rebuild on start (they show nothing since the last stop), an active alert
    // over an endpoint that still fails read a window without checks and recovered: the batch
    // waits for them instead, as an endpoint's deletion waits for its views (`viewsAt`).
    await this.platform.freshness.requireAt(event.position, [ROLLUPS_PROJECTION], VIEWS_WAIT_MS);
    for (const slo of due) {
      this.lastEvaluated.set(slo.slo_id, now);
      const at = Date.now();
      const counts = await this.counter.burnCounts(slo, at, ALERT_WINDOWS);
      await this.decideOn(slo.slo_id, event, (state) => decideBurn(state, counts, check, new Date(at).toISOString()));
    }
  }

  /**
   * The team's live SLOs. Every live check asks, so the view is read again only once it changed
   * (its stamp), not per check. The checks of one batch (`scope`) share one look at other
   * processes' commits: in SQLite each look is a `PRAGMA data_version`, which cost about as much
   * as the rest of the reactor's work on a check.
   */
  private async slosOfTeam(teamId: number, scope: object): Promise<SloDoc[]> {
    const stamps = await this.platform.reader.stamps(SLOS_PROJECTION, SLOS_COLLECTION, scope);
    const version = stamps ? `${stamps.collection}@${stamps.changed}` : null;
    if (version === null || version !== this.teamsVersion) {
      this.teams.clear();
      this.teamsVersion = version;
    }
    let slos = this.teams.get(teamId);
    if (!slos) {
      slos = (await this.platform.reader.find(SLOS_PROJECTION, SLOS_COLLECTION, { filter: { team_id: teamId }, sort: [['slo_id', 'asc']] })) as unknown as SloDoc[];
      if (version !== null) this.teams.set(teamId, slos);
    }
    return slos;
  }

  /**
   * Opens the trigger's incident, or awaits the alert again in the one its last end left open
   * (auto_resolve off). An alert that ended before the incident was linked ends it through the
   * ending event, later in the log, which finds the incident in `open`.
   */
  async onTriggered(event: RecordedEvent<SloBurnAlertTriggeredData>, views: ViewTransaction): Promise<void> {
    const data = event.data;
    const context = systemContext('slos', event.id, event.id);
    const keptOpen = await this.keptOpenIncident(data.slo_id, data.severity, views);
    const incidentId = await this.incidents.claimIncidentId(`slo-burn-trigger-${event.id}`, event.id, context, keptOpen);
    const slo = (await this.slos.load(sloStream(data.slo_id))).state;
    if ((await this.incidents.load(incidentId)) === null) await this.openIncident(incidentId, data, slo, context);
    else await this.incidents.command(incidentId, { kind: 'alert_triggered_again', alert: burnAlert(data.severity, event), reason: burnReason(data, slo) }, context);
    views.put(OPEN, { id: openKey(data.slo_id, data.severity), incident_id: incidentId });
    await this.decideOn(data.slo_id, event, (state) => decideIncidentLink(state, data.severity, data.triggered_at, incidentId));
  }

  /** The incident the alert's last end left open (`open` keeps it only then), if it still is. */
  private async keptOpenIncident(sloId: number, severity: BurnSeverity, views: ViewTransaction): Promise<number | null> {
    const open = await views.get(OPEN, openKey(sloId, severity));
    if (!open) return null;
    const incident = await this.incidents.load(Number(open.incident_id));
    return incident !== null && isOpen(incident) ? incident.id : null;
  }

  async onRecovered(event: RecordedEvent<SloBurnAlertRecoveredData>, views: ViewTransaction): Promise<void> {
    await this.resolveOpen(event, event.data.severity, views);
  }

  /**
   * The endpoint leaves every SLO of its team that lists it (decided on each SLO's stream, so a
   * batch handled again appends nothing twice), and the SLOs of its project end their alerts if
   * it was the project's last.
   */
  async onEndpointDeleted(event: RecordedEvent<EndpointDeletedData>, batch: object): Promise<void> {
    const { endpoint_id: endpointId, team_id: teamId, project_id: projectId } = event.data;
    await this.viewsAt(event);
    const slos = await this.slosOfTeam(teamId, batch);
    for (const slo of slos.filter((s) => (s.endpoint_ids ?? []).includes(endpointId))) {
      await this.decideOn(slo.slo_id, event, (state) => decideEndpointDeleted(state, endpointId, event.data.deleted_at));
    }
    await this.endAlertsIfProjectEmpty(event, teamId, slos, { project_id: projectId, endpoint_id: endpointId, left_by: 'deleted', emptied_at: event.data.deleted_at });
  }

  /**
   * The SLO was given `endpointIds` (created or updated): those whose stream says they are
   * deleted leave it. Its command checked them against the monitoring view, which may not have
   * shown a deletion made just before; the reactor takes that deletion first (the log's order),
   * when the view could not list the SLO yet.
   */
  async dropDeletedEndpoints(event: RecordedEvent, endpointIds: number[] | null | undefined, at: string): Promise<void> {
    for (const endpointId of endpointIds ?? []) {
      if ((await this.endpoints.load(endpointStream(endpointId))).state !== null) continue;
      const sloId = (event.data as { slo_id: number }).slo_id;
      await this.decideOn(sloId, event, (state) => decideEndpointDeleted(state, endpointId, at));
    }
  }

  /** An endpoint moved to another project: the SLOs of the project it left end their alerts if it was that project's last. */
  async onEndpointReconfigured(event: RecordedEvent<EndpointReconfiguredData>, batch: object): Promise<void> {
    if (event.data.changes.project_id === undefined) return;
    const before = (await this.endpoints.loadThrough(event.streamId, event.revision - 1)).state;
    if (before === null) return;
    await this.viewsAt(event);
    const slos = await this.slosOfTeam(event.data.team_id, batch);
    await this.endAlertsIfProjectEmpty(event, event.data.team_id, slos, { project_id: before.project_id, endpoint_id: event.data.endpoint_id, left_by: 'moved', emptied_at: event.data.updated_at });
  }

  /** The team's SLOs of `fact.project_id` end their active alerts when the project has no endpoint left (the monitoring view, at or past `event`). */
  private async endAlertsIfProjectEmpty(event: RecordedEvent, teamId: number, teamSlos: SloDoc[], fact: Omit<SloProjectEmptiedData, 'slo_id' | 'team_id'>): Promise<void> {
    const ofProject = teamSlos.filter((slo) => slo.project_id === fact.project_id);
    if (ofProject.length === 0) return;
    if (await projectHasEndpoints(this.platform.reader, teamId, fact.project_id)) return;
    for (const slo of ofProject) await this.decideOn(slo.slo_id, event, (state) => decideProjectEmptied(state, fact));
  }

  /**
   * The views an endpoint's deletion or move is read through have applied it: `slos` (which
   * SLOs list the endpoint or select its project: the reactor may run ahead of it, and an SLO
   * created just before would be missed) and monitoring (whether the project has an endpoint
   * left). A later position is as good: an SLO created since loses the endpoint at its own
   * event, and an endpoint added since measures the project again. Views still behind after
   * VIEWS_WAIT_MS (an on-start rebuild) end the batch with ViewsBehindError: the runner logs
   * that the reactor waits, with the views' progress, and handles the batch again at once, so
   * the wait goes on in bounded pieces and ends as soon as the views reach the event.
   */
  private async viewsAt(event: RecordedEvent): Promise<void> {
    await this.platform.freshness.requireAt(event.position, [SLOS_PROJECTION, MONITORING_VIEW], VIEWS_WAIT_MS);
  }

  private async decideOn(sloId: number, event: RecordedEvent, decideEvents: (state: SloState) => SloEvent[]): Promise<void> {
    await decideOnSlo(this.platform.events, sloId, systemContext('slos', event.id, event.id), decideEvents, { fold: this.slos, attempts: COMMAND_ATTEMPTS });
  }

  /** The SLO's last endpoint was deleted: its alerts ended, and each incident one of them holds open resolves as on a recovery. */
  async onSloEndpointDeleted(event: RecordedEvent<SloEndpointDeletedData>, views: ViewTransaction): Promise<void> {
    if (event.data.endpoint_ids.length > 0) return;
    for (const severity of BURN_SEVERITIES) await this.resolveOpen(event, severity, views, event.data.endpoint_id);
  }

  /** The SLO's project was left without an endpoint: its alerts ended, and each incident one of them holds open resolves as on a recovery. */
  async onProjectEmptied(event: RecordedEvent<SloProjectEmptiedData>, views: ViewTransaction): Promise<void> {
    const data = event.data;
    const deletedEndpointId = data.left_by === 'deleted' ? (data.endpoint_id ?? undefined) : undefined;
    for (const severity of BURN_SEVERITIES) await this.resolveOpen(event, severity, views, deletedEndpointId);
  }

  /**
   * The SLO's alerts ended with it: each incident one of them holds open resolves as on a
   * recovery. One that auto_resolve off keeps open is forgotten all the same: no alert of a
   * deleted SLO triggers again, so nothing would ever claim it.
   */
  async onDeleted(event: RecordedEvent<SloDeletedData>, views: ViewTransaction): Promise<void> {
    for (const severity of BURN_SEVERITIES) {
      if (await this.resolveOpen(event, severity, views)) views.delete(OPEN, openKey(event.data.slo_id, severity));
    }
  }

  /**
   * The alert of `severity` ended with `ending` (an event of the SLO's stream): the incident it
   * holds open resolves, or with auto_resolve off records the end and stays in `open`, so the
   * alert triggering again is awaited in it. `deletedEndpointId`: the alert ended because that
   * endpoint, the SLO's last, was deleted. The incident records it as alerting's deleted
   * endpoints are (it stops waiting for it, and its history says so) when it awaits that
   * endpoint. Returns whether `open` keeps the incident.
   */
  private async resolveOpen(ending: RecordedEvent, severity: BurnSeverity, views: ViewTransaction, deletedEndpointId?: number): Promise<boolean> {
    const key = openKey((ending.data as { slo_id: number }).slo_id, severity);
    const open = await views.get(OPEN, key);
    if (!open) return false;
    const incidentId = Number(open.incident_id);
    if (deletedEndpointId !== undefined) {
      await this.incidents.command(incidentId, { kind: 'resolve_on_recovery', endpoint_id: deletedEndpointId, endpoint_deleted: true }, systemContext('slos'));
    }
    const after = await this.incidents.command(incidentId, { kind: 'resolve_on_recovery', alert: burnAlert(severity, ending) }, systemContext('slos'));
    if (after !== null && isOpen(after)) return true;
    views.delete(OPEN, key);
    return false;
  }

  /** The SLO's endpoints now: its list, or its project's current endpoints (the first one's project otherwise). */
  private async endpointsOf(slo: SloState): Promise<{ projectId: number; endpointIds: number[] }> {
    if (slo.project_id !== null) {
      const rows = await this.platform.reader.find(MONITORING_VIEW, ENDPOINTS, { filter: { team_id: slo.team_id, project_id: slo.project_id }, sort: [['endpoint_id', 'asc']], limit: 500 });
      return { projectId: slo.project_id, endpointIds: rows.map((row) => Number(row.endpoint_id)) };
    }
    const ids = slo.endpoint_ids ?? [];
    const first = ids.length > 0 ? await this.platform.reader.get(MONITORING_VIEW, ENDPOINTS, ids[0]) : null;
    return { projectId: first ? Number(first.project_id) : 0, endpointIds: ids };
  }

  private async openIncident(incidentId: number, data: SloBurnAlertTriggeredData, slo: SloState, context: CommandContext): Promise<void> {
    const { projectId, endpointIds } = await this.endpointsOf(slo);
    const ids = endpointIds.length > 0 ? endpointIds : [data.endpoint_id];
    const name = sloName(slo, data.slo_id);
    await this.incidents.open(incidentId, data.team_id, context, (status): IncidentCommand => ({
      kind: 'open_automatic',
      incident_id: incidentId,
      team_id: data.team_id,
      project_id: projectId,
      endpoint_id: ids[0],
      endpoint_ids: ids,
      signal: 'slo_burn',
      severity: INCIDENT_SEVERITY[data.severity],
      metadata: { slo_id: data.slo_id, burn_alert: data.severity },
      title: `SLO ${name} is burning its error budget`,
      detection_reason: burnReason(data, slo),
      status,
    }));
  }
}

function sloName(slo: SloState, sloId: number): string {
  return slo.name || `SLO ${sloId}`;
}

/** Why the alert triggered, as its incident's detection reason (and a trigger awaited again) says. */
function burnReason(data: SloBurnAlertTriggeredData, slo: SloState): string {
  const rule = BURN_RULES.find((r) => r.severity === data.severity)!;
  return (
    `SLO "${sloName(slo, data.slo_id)}" (id ${data.slo_id}, objective ${slo.objective_percent} % over ${slo.window_days} days) is burning its error budget: ` +
    `burn rate ${data.long_burn_rate} over ${data.long_window} and ${data.short_burn_rate} over ${data.short_window}, both above ${rule.factorTenths / 10} (${data.severity}).`
  );
}

/** The burn alert as the incident awaits it: each transition ordered by its revision in the SLO's stream. */
function burnAlert(severity: BurnSeverity, transition: RecordedEvent): AlertTransition {
  return { name: `SLO burn alert (${severity})`, sequence: transition.revision };
}

function openKey(sloId: number, severity: BurnSeverity): string {
  return `${sloId}:${severity}`;
}
