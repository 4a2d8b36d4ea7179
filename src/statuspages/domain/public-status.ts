/**
 * What a public status page shows, as plain data: the state rules of the issue and the Atlassian
 * Statuspage v2 shapes (`summary.json`, `incidents.json`). No I/O: the application hands in what
 * it read from the views and the time; everything here is a function of those.
 *
 * Privacy by construction: the only incident fields read are id, title, severity, endpoint ids,
 * checkpoints, created/resolved/reopened times, the merge pointer and whether it flaps; the only endpoint fields are id,
 * team, project, name, `maintenance_until`, `enabled` and `depends_on`. Comments, detection reasons, metadata, URLs and
 * hidden values are never copied into the model, so no representation can show them.
 */
import { suppressingInMaintenance, type ParentState } from '../../alerting/domain/dependencies.js';
import { coverage, windowCoversEndpoint, type Coverage, type MaintenanceWindow } from '../../monitoring/domain/maintenance.js';
import type { StatusPageComponent } from './events.js';
import type { StatusPageDoc } from '../views/status-pages/view.js';

export const COMPONENT_STATUSES = ['operational', 'degraded_performance', 'partial_outage', 'major_outage', 'under_maintenance'] as const;
export type ComponentStatus = (typeof COMPONENT_STATUSES)[number];
export type Indicator = 'none' | 'minor' | 'major' | 'critical';
export type IncidentStatus = 'investigating' | 'identified' | 'monitoring' | 'resolved';
export type MaintenanceStatus = 'scheduled' | 'in_progress' | 'completed';

export const INDICATOR_DESCRIPTIONS: Record<Indicator, string> = {
  none: 'All Systems Operational',
  minor: 'Degraded Performance',
  major: 'Partial System Outage',
  critical: 'Major System Outage',
};

export const COMPONENT_STATUS_LABELS: Record<ComponentStatus, string> = {
  operational: 'Operational',
  degraded_performance: 'Degraded performance',
  partial_outage: 'Partial outage',
  major_outage: 'Major outage',
  under_maintenance: 'Under maintenance',
};

const DAY_MS = 86_400_000;
/** Maintenance windows are listed from this long before they start. */
export const UPCOMING_MAINTENANCE_MS = 7 * DAY_MS;
/** The HTML page lists incidents resolved within this long. */
export const PAST_INCIDENTS_MS = 14 * DAY_MS;
export const MAX_LISTED_INCIDENTS = 50;
export const MAX_FEED_ENTRIES = 50;

// ------------------------------------------------------------------------------------------
// Inputs (read from the views by the application)
// ------------------------------------------------------------------------------------------

/** The page as the status-pages view keeps it (views/status-pages/view.ts). */
export type PageInput = Omit<StatusPageDoc, 'id'>;

export interface EndpointInput {
  endpoint_id: number;
  team_id: number;
  project_id: number;
  name: string;
  maintenance_until: string | null;
  /** A disabled endpoint is not probed: as a parent it suppresses nothing. */
  enabled: boolean;
  /** The endpoints it depends on (`depends_on`). */
  depends_on: number[];
}

export interface CheckpointInput {
  id: number;
  title: string;
  body: string;
  status_label: string;
  created_at: string;
  updated_at: string;
}

export interface IncidentInput {
  id: number;
  team_id: number;
  endpoint_ids: number[];
  title: string;
  severity: 'warning' | 'critical';
  /** The incident's type; a `certificate_expiry` warning is the operator's, never the page's. */
  type?: string;
  /** `automatic` incidents are shown without a checkpoint on pages that publish them. */
  source: 'automatic' | 'manual';
  created_at: string;
  resolved_at: string | null;
  merged_into_id: number | null;
  checkpoints: CheckpointInput[];
  /** `metadata.flapping: true` (and nothing else of the metadata): its endpoint flaps. */
  flapping?: boolean;
  /** Each reopening with the resolution it undid, oldest first (`n` counts from the first). */
  reopenings?: Array<{ n: number; resolved_at: string; reopened_at: string }>;
}

/** Triggered alert signals of one endpoint, with the time each triggered. */
export interface SignalsInput {
  availability: string | null;
  latency: string | null;
  /** When the availability signal last recovered (null: triggered, or never changed). */
  availability_recovered_at?: string | null;
  /** Since when it fails by its availability rule on the checks its maintenance window hid (alerting's state; null: it does not). */
  failing_in_maintenance_since?: string | null;
  /** Triggered before its window, it recovered by its rule on the checks the window hid (it then suppresses nothing). */
  recovered_in_maintenance?: boolean;
}

export interface StatusInputs {
  page: PageInput;
  /** The page's absolute URL. */
  url: string;
  /** Endpoints by id: the page's, and those they depend on (others are ignored anyway). */
  endpoints: Map<number, EndpointInput>;
  /** The team's windows (cancelled and ended ones are skipped here). */
  windows: MaintenanceWindow[];
  /** Candidate incidents of the team; filtered here. */
  incidents: IncidentInput[];
  /** By endpoint id: the page's endpoints and those they depend on. */
  signals: Map<number, SignalsInput>;
  now: number;
}

// ------------------------------------------------------------------------------------------
// Outputs: the Statuspage v2 shapes
// ------------------------------------------------------------------------------------------

export interface SpPage {
  id: string;
  name: string;
  url: string;
  time_zone: string;
  updated_at: string;
}

export interface SpComponent {
  id: string;
  name: string;
  status: ComponentStatus;
  created_at: string;
  updated_at: string;
  position: number;
  description: string | null;
  group_id: null;
  only_show_if_degraded: false;
}

export interface SpIncidentUpdate {
  id: string;
  status: IncidentStatus;
  body: string;
  /** Additive: the checkpoint's title. */
  title: string;
  created_at: string;
  updated_at: string;
  display_at: string;
}

export interface SpIncident {
  id: string;
  name: string;
  status: IncidentStatus;
  impact: 'minor' | 'major';
  created_at: string;
  updated_at: string;
  resolved_at: string | null;
  shortlink: string;
  components: SpComponent[];
  incident_updates: SpIncidentUpdate[];
}

export interface SpMaintenance {
  id: string;
  name: string;
  status: MaintenanceStatus;
  scheduled_for: string;
  scheduled_until: string;
  components: SpComponent[];
  incident_updates: [];
}

export interface SpSummary {
  page: SpPage;
  status: { indicator: Indicator; description: string };
  components: SpComponent[];
  incidents: SpIncident[];
  scheduled_maintenances: SpMaintenance[];
}

/**
 * A component down or degraded with no published incident explaining it: the page says so under
 * the component (and the feeds carry it), so it never shows an outage above "no incidents".
 */
export interface OutageNotice {
  component_id: string;
  component: string;
  status: 'major_outage' | 'degraded_performance';
  /**
   * detected: an outage or degradation; recovered: an outage whose incident is held open only
   * because the endpoint flaps (the component is degraded while it is watched).
   */
  kind: 'detected' | 'recovered';
  /** When the service detected it (the signal's trigger or the unpublished incident's opening), or when it recovered. */
  since: string;
  /** "Outage detected at 09:13 UTC; investigating." */
  text: string;
}

/** Everything the representations are rendered from. */
export interface StatusModel {
  summary: SpSummary;
  /** Every visible incident, newest first (incidents.json takes the first 50). */
  incidents: SpIncident[];
  /** Visible incidents resolved within the last 14 days, newest first. */
  pastIncidents: SpIncident[];
  description: string;
  historyDays: number;
  /** Components down or degraded that no published open incident explains, in page order. */
  notices: OutageNotice[];
  /** Each checkpoint's own status label as the team wrote it, by update id (the HTML shows it). */
  labels: Map<string, string>;
  /** The model is exact until this instant (epoch ms): a window starts or ends, a day turns... */
  validUntil: number;
}

// ------------------------------------------------------------------------------------------
// Rules
// ------------------------------------------------------------------------------------------

/** A checkpoint's status label, matched without regard to case; anything else is investigating. */
export function updateStatus(label: string): Exclude<IncidentStatus, 'resolved'> {
  const normalized = label.trim().toLowerCase();
  return normalized === 'identified' || normalized === 'monitoring' ? normalized : 'investigating';
}

/**
 * A component's state from its endpoint: maintenance, then an open critical incident or a
 * triggered availability signal, then a triggered latency signal or an open warning incident,
 * else operational. Open incidents count whether or not they carry a checkpoint.
 */
export function componentStatus(input: { underMaintenance: boolean; openSeverities: Array<'warning' | 'critical'>; signals: SignalsInput | undefined }): ComponentStatus {
  if (input.underMaintenance) return 'under_maintenance';
  if (input.openSeverities.includes('critical') || input.signals?.availability) return 'major_outage';
  if (input.openSeverities.includes('warning') || input.signals?.latency) return 'degraded_performance';
  return 'operational';
}

/**
 * When an open automatic incident is held open only because its endpoint flaps (its signal has
 * recovered; the documented flapping rule keeps it open for a window of passing checks): the
 * time the signal recovered, else null. Only the page's endpoints are judged (the only signals read).
 */
export function flappingHoldSince(incident: IncidentInput, signals: Map<number, SignalsInput>): string | null {
  if (incident.resolved_at !== null || incident.source !== 'automatic' || incident.flapping !== true) return null;
  const openedAt = latestOf([incident.created_at, ...(incident.reopenings ?? []).map((r) => r.reopened_at)]);
  let recoveredAt: string | null = null;
  for (const id of incident.endpoint_ids) {
    const signal = signals.get(id);
    if (!signal) continue;
    const recovered = signal.availability === null ? (signal.availability_recovered_at ?? null) : null;
    if (recovered === null || recovered < openedAt) return null;
    if (recoveredAt === null || recovered > recoveredAt) recoveredAt = recovered;
  }
  return recoveredAt;
}

export type IncidentImpact = SpIncident['impact'];

/**
 * The endpoints `endpoint` depends on whose planned work explains its failures now: each is
 * under maintenance now and fails during it, so alerting suppresses the endpoint's failing checks
 * (what its alert status lists in `suppressed_by_maintenance`; one rule,
 * `suppressingInMaintenance`), with the maintenance that covers it. After its window a parent
 * still failing keeps suppressing until its own signal takes over, but its planned work is over:
 * it counts no more here.
 */
export function parentsInPlannedWork(
  endpoint: EndpointInput,
  endpoints: Map<number, EndpointInput>,
  signals: Map<number, SignalsInput>,
  windows: MaintenanceWindow[],
  now: number,
): Array<{ endpoint: EndpointInput; cover: Coverage; since: string }> {
  const parents = endpoint.depends_on.map((id): ParentState => {
    const parent = endpoints.get(id);
    const signal = signals.get(id);
    return {
      endpoint_id: id,
      probed: parent !== undefined && parent.team_id === endpoint.team_id && parent.enabled,
      availability: signal?.availability ? 'triggered' : 'ok',
      failing_in_maintenance: (signal?.failing_in_maintenance_since ?? null) !== null,
      recovered_in_maintenance: signal?.recovered_in_maintenance === true,
    };
  });
  return suppressingInMaintenance(parents)
    .map((id) => ({ endpoint: endpoints.get(id)!, since: signals.get(id)!.failing_in_maintenance_since! }))
    .map((parent) => ({ ...parent, cover: coverage(now, { ...parent.endpoint }, windows) }))
    .filter((parent) => parent.cover.under_maintenance);
}

/** An incident's Statuspage impact: `major` for a critical incident, `minor` for a warning. */
export function impactOf(severity: 'warning' | 'critical'): IncidentImpact {
  return severity === 'critical' ? 'major' : 'minor';
}

const INDICATOR_ORDER: readonly Indicator[] = ['none', 'minor', 'major', 'critical'];

/**
 * From the components: none when all are operational or in maintenance, minor when the worst is
 * degraded, major with an outage, critical when more than half are out. Then at least the impact
 * of the worst active incident the page lists (as Statuspage counts unresolved incidents), so the
 * page never says all is well above an incident it shows, e.g. one opened before its component's
 * maintenance window began.
 */
export function pageIndicator(statuses: ComponentStatus[], listedImpacts: IncidentImpact[]): Indicator {
  return listedImpacts.reduce<Indicator>((worst, impact) => (INDICATOR_ORDER.indexOf(impact) > INDICATOR_ORDER.indexOf(worst) ? impact : worst), componentsIndicator(statuses));
}

function componentsIndicator(statuses: ComponentStatus[]): Indicator {
  const outages = statuses.filter((s) => s === 'major_outage').length;
  if (outages > 0) return outages * 2 > statuses.length ? 'critical' : 'major';
  if (statuses.some((s) => s === 'degraded_performance' || s === 'partial_outage')) return 'minor';
  return 'none';
}

// ------------------------------------------------------------------------------------------
// Building the model
// ------------------------------------------------------------------------------------------

function newestFirst<T extends { created_at: string; id: number }>(items: T[]): T[] {
  return [...items].sort((a, b) => (a.created_at === b.created_at ? b.id - a.id : a.created_at < b.created_at ? 1 : -1));
}

const latestOf = (times: Array<string | null | undefined>): string =>
  times.reduce<string>((latest, time) => (time && time > latest ? time : latest), '');

/** `09:13 UTC` on the day of `now` (UTC), else `2026-11-25 09:13 UTC`. */
function detectedAt(since: string, now: number): string {
  const time = `${since.slice(11, 16)} UTC`;
  return since.slice(0, 10) === new Date(now).toISOString().slice(0, 10) ? time : `${since.slice(0, 10)} ${time}`;
}

/** The sentence for an outage or degradation the service detected before anyone wrote about it. */
export function detectedText(kind: 'major_outage' | 'degraded_performance', since: string, now: number): string {
  return `${kind === 'major_outage' ? 'Outage' : 'Degraded performance'} detected at ${detectedAt(since, now)}; investigating.`;
}

/** The sentence for an outage that recovered while its incident is held open because the endpoint flaps. */
export function recoveredText(since: string, now: number): string {
  return `Recovered at ${detectedAt(since, now)}; monitoring, as it has been unstable.`;
}

/** The generated first update of an automatic incident shown before (or without) a checkpoint. */
export const GENERATED_UPDATE_TITLE = 'Detected automatically';
/** The generated update of a resolution, as Statuspage adds one when an incident is resolved. */
export const RESOLVED_UPDATE_TITLE = 'Resolved';
export const RESOLVED_UPDATE_BODY = 'This incident has been resolved.';
/** The generated update of a reopening (the problem is back: investigating). */
export const REOPENED_UPDATE_TITLE = 'Reopened';
export const REOPENED_UPDATE_BODY = 'This incident has been reopened.';
/** The generated update of an automatic incident held open because its endpoint flaps. */
export const RECOVERED_UPDATE_TITLE = 'Recovered, monitoring';
export const RECOVERED_UPDATE_BODY = 'The service has recovered. It has been unstable, so we are monitoring it before we close this incident.';

export function incidentAnchor(incidentId: number): string {
  return `incident-${incidentId}`;
}

export function buildStatusModel(inputs: StatusInputs): StatusModel {
  const { page, now } = inputs;
  const nowIso = new Date(now).toISOString();
  const boundaries: number[] = [Math.floor(now / DAY_MS) * DAY_MS + DAY_MS];
  const later = (time: string | number | null | undefined) => {
    if (time === null || time === undefined) return;
    const at = typeof time === 'number' ? time : Date.parse(time);
    if (at > now) boundaries.push(at);
  };

  // The page's endpoints that exist in its team, in the page's order.
  const members = page.components
    .map((component) => ({ component, endpoint: inputs.endpoints.get(component.endpoint_id) }))
    .filter((m): m is { component: StatusPageComponent; endpoint: EndpointInput } => m.endpoint !== undefined && m.endpoint.team_id === page.team_id);
  const onPage = new Set(members.map((m) => m.endpoint.endpoint_id));

  const teamWindows = inputs.windows.filter((w) => !w.cancelled_at && w.team_id === page.team_id);
  // A page endpoint is also under maintenance while planned work on an endpoint it depends on explains its failures.
  const plannedWork = new Map(members.map((m) => [m.endpoint.endpoint_id, parentsInPlannedWork(m.endpoint, inputs.endpoints, inputs.signals, teamWindows, now)]));
  const plannedWindowIds = (endpointId: number) => (plannedWork.get(endpointId) ?? []).flatMap((p) => p.cover.maintenance_window_ids);
  const windows = teamWindows.filter((w) => members.some((m) => windowCoversEndpoint(w, m.endpoint) || plannedWindowIds(m.endpoint.endpoint_id).includes(w.window_id)));
  for (const w of windows) {
    later(w.starts_at);
    later(w.ends_at);
    later(Date.parse(w.starts_at) - UPCOMING_MAINTENANCE_MS);
  }
  // Planned work on a parent ends with its windows (or its legacy maintenance).
  for (const parent of [...plannedWork.values()].flat()) later(parent.endpoint.maintenance_until);

  // A certificate about to expire is a warning to renew it; the service still works.
  const affecting = inputs.incidents.filter(
    (i) => i.team_id === page.team_id && i.merged_into_id === null && i.type !== 'certificate_expiry' && i.endpoint_ids.some((id) => onPage.has(id)),
  );
  const openByEndpoint = new Map<number, IncidentInput[]>();
  /** Open incidents held open only by flapping, with the time their signal recovered. */
  const holds = new Map<number, string>();
  for (const incident of affecting) {
    if (incident.resolved_at !== null) continue;
    for (const id of incident.endpoint_ids) openByEndpoint.set(id, [...(openByEndpoint.get(id) ?? []), incident]);
    const held = flappingHoldSince(incident, inputs.signals);
    if (held !== null) holds.set(incident.id, held);
  }
  // A held incident's endpoint is watched, not down: it counts as a warning (degraded) until its signal triggers again.
  const pageSeverity = (incident: IncidentInput) => (holds.has(incident.id) ? 'warning' : incident.severity);

  const components: SpComponent[] = members.map(({ component, endpoint }, index) => {
    const cover = coverage(now, { ...endpoint }, windows);
    later(endpoint.maintenance_until);
    const planned = plannedWork.get(endpoint.endpoint_id) ?? [];
    const open = openByEndpoint.get(endpoint.endpoint_id) ?? [];
    const signals = inputs.signals.get(endpoint.endpoint_id);
    const status = componentStatus({ underMaintenance: cover.under_maintenance || planned.length > 0, openSeverities: open.map(pageSeverity), signals });
    const activeWindowIds = [...cover.maintenance_window_ids, ...plannedWindowIds(endpoint.endpoint_id)];
    const activeWindows = windows.filter((w) => activeWindowIds.includes(w.window_id));
    return {
      id: String(endpoint.endpoint_id),
      name: component.name ?? endpoint.name,
      status,
      created_at: page.created_at,
      updated_at: latestOf([page.updated_at, signals?.availability, signals?.latency, ...open.map((i) => i.created_at), ...open.map((i) => holds.get(i.id)), ...activeWindows.map((w) => w.starts_at), ...planned.map((p) => p.since)]),
      position: index + 1,
      description: null,
      group_id: null,
      only_show_if_degraded: false,
    };
  });
  const componentsOf = (endpointIds: number[]) => components.filter((c) => endpointIds.includes(Number(c.id)));

  const publishesAutomatic = page.publish_automatic_incidents === true;
  const generatedUpdate = (id: string, status: IncidentStatus, title: string, body: string, at: string): SpIncidentUpdate => ({
    id,
    status,
    body,
    title,
    created_at: at,
    updated_at: at,
    display_at: at,
  });
  const generated = (incident: IncidentInput): SpIncidentUpdate[] => {
    if (!publishesAutomatic || incident.source !== 'automatic') return [];
    const text = detectedText(incident.severity === 'critical' ? 'major_outage' : 'degraded_performance', incident.created_at, now);
    const updates = [generatedUpdate(`auto-${incident.id}`, 'investigating', GENERATED_UPDATE_TITLE, text, incident.created_at)];
    // Each hold is its own update (and feed entry): the signal may trigger and recover again.
    const held = holds.get(incident.id);
    if (held !== undefined) updates.push(generatedUpdate(`recovered-${incident.id}-${Date.parse(held)}`, 'monitoring', RECOVERED_UPDATE_TITLE, RECOVERED_UPDATE_BODY, held));
    return updates;
  };
  /**
   * Resolutions and reopenings are updates too, or feed readers and widgets reading the newest
   * update would never learn the incident ended (or came back). Each has an id of its own: the
   * first resolution `resolved-<id>`, the n-th after a reopening `resolved-<id>-<n>`.
   */
  const lifecycle = (incident: IncidentInput): SpIncidentUpdate[] => {
    const resolvedId = (n: number) => (n === 1 ? `resolved-${incident.id}` : `resolved-${incident.id}-${n}`);
    const updates: SpIncidentUpdate[] = [];
    const reopenings = incident.reopenings ?? [];
    for (const r of reopenings) {
      updates.push(generatedUpdate(resolvedId(r.n), 'resolved', RESOLVED_UPDATE_TITLE, RESOLVED_UPDATE_BODY, r.resolved_at));
      updates.push(generatedUpdate(`reopened-${incident.id}-${r.n}`, 'investigating', REOPENED_UPDATE_TITLE, REOPENED_UPDATE_BODY, r.reopened_at));
    }
    if (incident.resolved_at !== null) {
      const n = (reopenings[reopenings.length - 1]?.n ?? 0) + 1;
      updates.push(generatedUpdate(resolvedId(n), 'resolved', RESOLVED_UPDATE_TITLE, RESOLVED_UPDATE_BODY, incident.resolved_at));
    }
    return updates;
  };
  const toIncident = (incident: IncidentInput): SpIncident => {
    const updates = newestFirst(incident.checkpoints).map(
      (checkpoint): SpIncidentUpdate => ({
        id: String(checkpoint.id),
        status: updateStatus(checkpoint.status_label),
        body: checkpoint.body.trim() === '' ? checkpoint.title : checkpoint.body,
        title: checkpoint.title,
        created_at: checkpoint.created_at,
        updated_at: checkpoint.updated_at,
        display_at: checkpoint.created_at,
      }),
    );
    // The generated "detected" update is the first one: it goes last (newest first). The others
    // are placed by their time: a checkpoint (a postmortem) may follow a resolution.
    const [detected, ...watched] = generated(incident);
    if (detected) updates.push(detected);
    for (const update of [...watched, ...lifecycle(incident)]) {
      const newer = updates.findIndex((u) => u.created_at <= update.created_at);
      updates.splice(newer === -1 ? updates.length : newer, 0, update);
    }
    return {
      id: String(incident.id),
      name: incident.title,
      // An open incident's status is its newest update's (a checkpoint, a reopening, a recovery being watched).
      status: incident.resolved_at !== null ? 'resolved' : (updates[0]?.status ?? 'investigating'),
      // Held open only by flapping: watched, as its component is (minor), so the indicator agrees.
      impact: impactOf(pageSeverity(incident)),
      created_at: incident.created_at,
      // Public changes only: a private comment must not move it.
      updated_at: latestOf([incident.created_at, ...updates.map((u) => u.updated_at)]),
      resolved_at: incident.resolved_at,
      shortlink: `${inputs.url}#${incidentAnchor(incident.id)}`,
      components: componentsOf(incident.endpoint_ids),
      incident_updates: updates,
    };
  };

  // Published: at least one checkpoint, or automatic on a page that publishes those.
  const published = (i: IncidentInput) => i.checkpoints.length > 0 || (publishesAutomatic && i.source === 'automatic');
  const visible = newestFirst(affecting.filter(published)).map(toIncident);
  // The day in a notice's text is dropped on the day itself: the model changes at UTC midnight (a boundary already).
  const explained = new Set(visible.filter((i) => i.resolved_at === null).flatMap((i) => i.components.map((c) => c.id)));
  const notices: OutageNotice[] = [];
  for (const component of components) {
    if ((component.status !== 'major_outage' && component.status !== 'degraded_performance') || explained.has(component.id)) continue;
    const endpointId = Number(component.id);
    const signals = inputs.signals.get(endpointId);
    const severity = component.status === 'major_outage' ? 'critical' : 'warning';
    const open = openByEndpoint.get(endpointId) ?? [];
    const starts = [
      component.status === 'major_outage' ? signals?.availability : signals?.latency,
      ...open.filter((i) => !holds.has(i.id) && i.severity === severity).map((i) => i.created_at),
    ].filter((t): t is string => typeof t === 'string' && t !== '');
    const recovered = open.map((i) => holds.get(i.id)).filter((t): t is string => t !== undefined);
    if (starts.length === 0 && recovered.length > 0) {
      // Degraded only because an outage's incident is held open while the endpoint flaps.
      const since = recovered.sort()[recovered.length - 1];
      notices.push({ component_id: component.id, component: component.name, status: component.status, kind: 'recovered', since, text: recoveredText(since, now) });
      continue;
    }
    const since = starts.sort()[0] ?? component.updated_at;
    notices.push({ component_id: component.id, component: component.name, status: component.status, kind: 'detected', since, text: detectedText(component.status, since, now) });
  }
  const past = visible.filter((i) => i.resolved_at !== null && now - Date.parse(i.resolved_at) < PAST_INCIDENTS_MS);
  for (const incident of past) later(Date.parse(incident.resolved_at!) + PAST_INCIDENTS_MS);

  const maintenances = windows
    .filter((w) => Date.parse(w.ends_at) > now && Date.parse(w.starts_at) - now <= UPCOMING_MAINTENANCE_MS)
    .sort((a, b) => (a.starts_at === b.starts_at ? a.window_id - b.window_id : a.starts_at < b.starts_at ? -1 : 1))
    .map(
      (w): SpMaintenance => ({
        id: String(w.window_id),
        name: (w as MaintenanceWindow & { reason?: string | null }).reason || 'Scheduled maintenance',
        status: Date.parse(w.starts_at) <= now ? 'in_progress' : 'scheduled',
        scheduled_for: w.starts_at,
        scheduled_until: w.ends_at,
        components: components.filter((c) => windowCoversEndpoint(w, members.find((m) => m.endpoint.endpoint_id === Number(c.id))!.endpoint) || plannedWindowIds(Number(c.id)).includes(w.window_id)),
        incident_updates: [],
      }),
    );

  const open = visible.filter((i) => i.resolved_at === null);
  // The impacts the summary lists (one held open only by flapping listed minor, as its component).
  const indicator = pageIndicator(components.map((c) => c.status), open.map((i) => i.impact));
  const updatedAt = latestOf([page.updated_at, ...components.map((c) => c.updated_at), ...visible.slice(0, MAX_LISTED_INCIDENTS).map((i) => i.updated_at)]) || nowIso;
  return {
    summary: {
      page: { id: String(page.page_id), name: page.title, url: inputs.url, time_zone: 'Etc/UTC', updated_at: updatedAt },
      status: { indicator, description: INDICATOR_DESCRIPTIONS[indicator] },
      components,
      incidents: open,
      scheduled_maintenances: maintenances,
    },
    incidents: visible,
    pastIncidents: past,
    description: page.description,
    historyDays: page.history_days,
    notices,
    // A reopening is labelled as such on the HTML page (its status, investigating, says less).
    labels: new Map([
      ...affecting.flatMap((i) => i.checkpoints.map((c) => [String(c.id), c.status_label] as [string, string])),
      ...visible.flatMap((i) => i.incident_updates.filter((u) => u.id.startsWith('reopened-')).map((u) => [u.id, REOPENED_UPDATE_TITLE] as [string, string])),
    ]),
    validUntil: Math.min(...boundaries),
  };
}

/** The most recent updates of the visible incidents (checkpoints and generated ones), newest first (one feed entry each). */
export function feedEntries(model: StatusModel, limit = MAX_FEED_ENTRIES): Array<{ incident: SpIncident; update: SpIncidentUpdate }> {
  const entries = model.incidents.flatMap((incident) => incident.incident_updates.map((update) => ({ incident, update })));
  entries.sort((a, b) => (a.update.created_at === b.update.created_at ? Number(b.update.id) - Number(a.update.id) : a.update.created_at < b.update.created_at ? 1 : -1));
  return entries.slice(0, limit);
}
