import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { AnalyticsQuery } from '../../analytics/views/rollups/queries.js';
import { ViewAnalyticsFacts } from '../../analytics/views/endpoints/queries.js';
import { ROLLUPS_COLLECTION, ROLLUPS_PROJECTION } from '../../analytics/views/rollups/view.js';
import { INCIDENT_CHECKPOINTS, INCIDENTS, INCIDENTS_VIEW, type CheckpointDoc, type IncidentDoc } from '../../incidents/views/incidents/view.js';
import type { Checkpoint } from '../../incidents/domain/events.js';
import { MonitoringReads } from '../../monitoring/views/monitoring/queries.js';
import { DerivedViewCache, type ViewSource } from '../../platform/projections/view-cache.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import type { Doc } from '../../platform/read-store/read-store.port.js';
import {
  buildStatusModel,
  type EndpointInput,
  type IncidentInput,
  type SignalsInput,
  type StatusModel,
} from '../domain/public-status.js';
import { STATUS_PAGES_COLLECTION, STATUS_PAGES_PROJECTION, type StatusPageDoc } from '../views/status-pages/view.js';
import { ALERT_STATUS, ALERTING_VIEW } from '../../alerting/views/alerting/view.js';
import { ENDPOINTS, MAINTENANCE_WINDOWS, MONITORING_VIEW } from '../../monitoring/views/monitoring/view.js';
import { statusPageUrl } from '../views/status-pages/queries.js';

/** One representation of a page, ready to send. */
export interface Rendered {
  body: Buffer;
  etag: string;
  contentType: string;
}

/** Daily uptime of one component, oldest day first; null: no applicable check that day. */
export interface UptimeDay {
  date: string;
  uptime_percent: number | null;
  checks: number;
}

export interface PageView {
  model: StatusModel;
  /** By component id. */
  uptime: Map<string, UptimeDay[]>;
}

export type RenderKind = 'html' | 'summary' | 'incidents' | 'atom' | 'rss';

/**
 * Alert states and rollups are written with every check of every endpoint: a page read before
 * such a write is served for up to this long after it was rendered (at most one rendering per
 * page and period however busy the service), so a new signal or a day's uptime shows within it.
 * Pages, endpoints, windows and incidents change rarely: their writes show at once.
 */
export const BUSY_VIEW_LAG_MS = 2_000;

/** The views the model is read from: while none changes (and until `validUntil`) it is exact. */
const MODEL_SOURCES: ViewSource[] = [
  { projection: STATUS_PAGES_PROJECTION, collection: STATUS_PAGES_COLLECTION },
  { projection: MONITORING_VIEW, collection: ENDPOINTS },
  { projection: MONITORING_VIEW, collection: MAINTENANCE_WINDOWS },
  { projection: INCIDENTS_VIEW, collection: INCIDENTS },
  { projection: INCIDENTS_VIEW, collection: INCIDENT_CHECKPOINTS },
  { projection: ALERTING_VIEW, collection: ALERT_STATUS, lagMs: BUSY_VIEW_LAG_MS },
];
/** The HTML page also shows daily uptime from the analytics rollups. */
const HTML_SOURCES: ViewSource[] = [...MODEL_SOURCES, { projection: ROLLUPS_PROJECTION, collection: ROLLUPS_COLLECTION, lagMs: BUSY_VIEW_LAG_MS }];

/** Besides every open incident, this many of the team's newest incidents are considered. */
const RECENT_INCIDENTS = 500;
const DAY_MS = 86_400_000;
/** Pages whose model and representations one API process keeps. */
const CACHED_PAGES = 250;

export function etagOf(body: Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
}

/** Checkpoints per incident, in chunks of `in` lists that stay well under SQLite's parameter bound. */
const IN_CHUNK = 250;

/**
 * The public fields of an incident: its head document and its checkpoints (item documents since
 * the view's version 2; a version-1 document, still served while an upgraded view is rebuilt,
 * holds them in its state).
 */
function incidentInput(doc: IncidentDoc, checkpoints: Checkpoint[]): IncidentInput {
  const state = doc.state;
  return {
    id: state.id,
    team_id: state.team_id,
    endpoint_ids: state.endpoint_ids,
    title: state.title,
    severity: state.severity,
    type: state.type,
    source: state.source === 'automatic' ? 'automatic' : 'manual',
    created_at: state.created_at,
    resolved_at: state.resolved_at,
    merged_into_id: state.merged_into_id,
    // The one metadata field a page reads, as a boolean: the rest of the metadata stays private.
    flapping: (state.metadata as { flapping?: unknown } | undefined)?.flapping === true,
    reopenings: doc.reopenings ?? [],
    checkpoints: checkpoints.map((c) => ({
      id: c.id,
      title: c.title,
      body: c.body,
      status_label: c.status_label,
      created_at: c.created_at,
      updated_at: c.updated_at,
    })),
  };
}

function signalOf(doc: Doc | undefined, signal: 'availability' | 'latency') {
  return (doc?.state as { signals?: Record<string, { state: string; since: string | null }> } | undefined)?.signals?.[signal];
}

function triggeredSince(doc: Doc | undefined, signal: 'availability' | 'latency'): string | null {
  const state = signalOf(doc, signal);
  return state?.state === 'triggered' ? (state.since ?? '1970-01-01T00:00:00.000Z') : null;
}

/** When the signal last recovered: its `since` while ok (null while triggered or never changed). */
function recoveredSince(doc: Doc | undefined, signal: 'availability'): string | null {
  const state = signalOf(doc, signal);
  return state?.state === 'ok' ? state.since : null;
}

/** What a page reads of one endpoint's alert state: its triggered signals, its last recovery and its state during maintenance. */
function signalsInput(doc: Doc | undefined): SignalsInput {
  const maintenance = doc?.state as { maintenanceFailingSince?: string; maintenanceRecoveredSince?: string } | undefined;
  return {
    availability: triggeredSince(doc, 'availability'),
    latency: triggeredSince(doc, 'latency'),
    availability_recovered_at: recoveredSince(doc, 'availability'),
    failing_in_maintenance_since: maintenance?.maintenanceFailingSince ?? null,
    recovered_in_maintenance: maintenance?.maintenanceRecoveredSince !== undefined,
  };
}

/** The public fields of an endpoint document a page reads. */
function endpointInput(row: Doc): EndpointInput {
  return {
    endpoint_id: Number(row.endpoint_id),
    team_id: Number(row.team_id),
    project_id: Number(row.project_id),
    name: String(row.name),
    maintenance_until: (row.maintenance_until as string | null) ?? null,
    enabled: row.enabled !== false,
    depends_on: (row.depends_on as number[] | undefined) ?? [],
  };
}

/**
 * The public side of status pages: the model read from the views and each representation
 * rendered from it, both kept while their views are unchanged (stamps) and the model's clock
 * boundaries have not passed. Representations are rendered by the functions the HTTP edge
 * registers (`renderers`), so this class knows nothing of HTML or XML.
 */
@Injectable()
export class PublicStatusReads {
  private readonly models: DerivedViewCache<StatusModel>;
  private readonly jsonLike: DerivedViewCache<Rendered>;
  private readonly html: DerivedViewCache<Rendered>;
  private readonly analytics: AnalyticsQuery;

  constructor(
    @Inject(PLATFORM) private readonly platform: Platform,
    private readonly monitoring: MonitoringReads,
  ) {
    // The busiest pages stay in memory; a rendered page is tens of kilobytes (up to ~0.5 MB with
    // 100 components over 90 days), so the caches are bounded by pages, not by bytes.
    this.models = new DerivedViewCache(platform.reader, MODEL_SOURCES, { capacity: CACHED_PAGES });
    this.jsonLike = new DerivedViewCache(platform.reader, MODEL_SOURCES, { capacity: 4 * CACHED_PAGES });
    this.html = new DerivedViewCache(platform.reader, HTML_SOURCES, { capacity: CACHED_PAGES });
    const facts = new ViewAnalyticsFacts(platform.reader, platform.views);
    this.analytics = new AnalyticsQuery(platform.views, facts, () => facts.collections());
  }

  /** The representation `kind` of the page at `slug`; null when no page has that slug. */
  async render(slug: string, kind: RenderKind, renderer: (view: PageView) => { body: string; contentType: string }, scope?: object): Promise<Rendered | null> {
    const cache = kind === 'html' ? this.html : this.jsonLike;
    return cache.get(
      `${kind}:${slug}`,
      async () => {
        const served = await this.model(slug, scope);
        if (!served) return null;
        const model = served.value;
        // Only the HTML page shows the uptime bars: the other representations do not read the rollups.
        const uptime = kind === 'html' ? await this.uptime(model) : new Map<string, UptimeDay[]>();
        const { body, contentType } = renderer({ model, uptime });
        const bytes = Buffer.from(body);
        // A model served within its alert states' lag ends this rendering with the lag.
        return { value: { body: bytes, etag: etagOf(bytes), contentType }, validUntil: served.until };
      },
      scope,
    );
  }

  private model(slug: string, scope?: object): Promise<{ value: StatusModel; until: number } | null> {
    return this.models.getServed(
      slug,
      async () => {
        const model = await this.loadModel(slug, scope);
        return model ? { value: model, validUntil: model.validUntil } : null;
      },
      scope,
    );
  }

  /** Daily uptime per component over the page's history, from the endpoint day rollups. */
  private async uptime(model: StatusModel): Promise<Map<string, UptimeDay[]>> {
    const days = model.historyDays;
    const to = Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS;
    const from = to - days * DAY_MS;
    const series = await Promise.all(
      model.summary.components.map((component) => this.analytics.computeSeries({ kind: 'endpoint', id: Number(component.id) }, from, to, 86_400, days)),
    );
    return new Map(
      model.summary.components.map((component, i) => [
        component.id,
        series[i].map((item) => ({ date: item.bucket_start.slice(0, 10), uptime_percent: item.uptime_percent, checks: item.checks })),
      ]),
    );
  }

  /** Each incident's checkpoints, from the item documents (or a version-1 document's own state). */
  private async checkpointsOf(heads: IncidentDoc[]): Promise<Map<number, Checkpoint[]>> {
    const byIncident = new Map<number, Checkpoint[]>();
    const itemized: number[] = [];
    for (const head of heads) {
      const whole = (head.state as IncidentDoc['state'] & { checkpoints?: Checkpoint[] }).checkpoints;
      if (head.checks_total === undefined) byIncident.set(head.incident_num, whole ?? []);
      else itemized.push(head.incident_num);
    }
    for (let start = 0; start < itemized.length; start += IN_CHUNK) {
      const rows = (await this.platform.reader.find(INCIDENTS_VIEW, INCIDENT_CHECKPOINTS, {
        filter: { incident_id: { in: itemized.slice(start, start + IN_CHUNK) } },
      })) as unknown as CheckpointDoc[];
      for (const row of rows) {
        const list = byIncident.get(row.incident_id);
        if (list) list.push(row.checkpoint);
        else byIncident.set(row.incident_id, [row.checkpoint]);
      }
    }
    return byIncident;
  }

  private async loadModel(slug: string, scope?: object): Promise<StatusModel | null> {
    const [doc] = (await this.platform.reader.find(STATUS_PAGES_PROJECTION, STATUS_PAGES_COLLECTION, { filter: { slug }, limit: 1 })) as unknown as StatusPageDoc[];
    if (!doc) return null;
    const now = Date.now();
    const endpointIds = doc.components.map((c) => c.endpoint_id);
    const [endpointRows, windows, open, recent, alerts] = await Promise.all([
      this.platform.reader.getMany(MONITORING_VIEW, ENDPOINTS, endpointIds),
      this.monitoring.windows(doc.team_id, new Date(now), scope),
      this.platform.reader.find(INCIDENTS_VIEW, INCIDENTS, { filter: { team_id: doc.team_id, state_name: 'open' } }),
      this.platform.reader.find(INCIDENTS_VIEW, INCIDENTS, { filter: { team_id: doc.team_id }, sort: [['incident_num', 'desc']], limit: RECENT_INCIDENTS }),
      this.platform.reader.getMany(ALERTING_VIEW, ALERT_STATUS, endpointIds),
    ]);
    // Only incidents that can appear need their checkpoints: of the team, not merged away, on the page.
    const onPage = new Set(endpointIds);
    // The endpoints the page's depend on: planned work on them can put a page endpoint under maintenance.
    const parentIds = [...new Set(endpointRows.flatMap((row) => endpointInput(row).depends_on))].filter((id) => !onPage.has(id));
    const [parentRows, parentAlerts] =
      parentIds.length === 0
        ? [[], []]
        : await Promise.all([this.platform.reader.getMany(MONITORING_VIEW, ENDPOINTS, parentIds), this.platform.reader.getMany(ALERTING_VIEW, ALERT_STATUS, parentIds)]);
    const endpoints = new Map([...endpointRows, ...parentRows].map((row) => [Number(row.endpoint_id), endpointInput(row)]));
    const heads = new Map<number, IncidentDoc>();
    for (const row of [...open, ...recent] as unknown as IncidentDoc[]) {
      if (row.team_id === doc.team_id && row.merged_into_id === null && row.endpoint_ids.some((id) => onPage.has(id))) heads.set(row.incident_num, row);
    }
    const checkpoints = await this.checkpointsOf([...heads.values()]);
    const incidents = [...heads.values()].map((head) => incidentInput(head, checkpoints.get(head.incident_num) ?? []));
    const alertsById = new Map([...alerts, ...parentAlerts].map((row) => [Number(row.endpoint_id), row]));
    const signals = new Map([...endpointIds, ...parentIds].map((id) => [id, signalsInput(alertsById.get(id))]));
    return buildStatusModel({
      page: doc,
      url: statusPageUrl(this.platform.config.publicBaseUrl, doc.slug),
      endpoints,
      windows,
      incidents,
      signals,
      now,
    });
  }
}
