import { Inject, Injectable } from '@nestjs/common';
import { CursorCodec, type Pagination } from '../../../platform/http/pagination.js';
import { PLATFORM, type Platform } from '../../../platform/platform.js';
import type { SortDirection } from '../../../platform/read-store/read-store.port.js';
import type { SloFigures } from '../../domain/budget.js';
import { SloNotFoundError } from '../../domain/errors.js';
import { BURN_SEVERITIES, type BurnSeverity, type BurnWindow, type SloFields } from '../../domain/events.js';
import { SLOS_COLLECTION, SLOS_PROJECTION, type SloDoc } from './view.js';
import { SloCounter } from '../../application/slo-figures.js';

const SORT: Array<[string, SortDirection]> = [['slo_id', 'asc']];

/** The SLO as both APIs show it (presentSlo). */
export interface SloObject extends SloFields {
  id: number;
  team_id: number;
  window: { from: string; to: string };
  good: number;
  total: number;
  sli_percent: number | null;
  error_budget: SloFigures['error_budget'];
  burn_rates: Record<BurnWindow, number | null>;
  alerts: Array<{ severity: BurnSeverity; since: string }>;
  status: SloFigures['status'];
  created_at: string;
  updated_at: string;
}

export function activeAlerts(doc: Pick<SloDoc, 'alerts'>): Array<{ severity: BurnSeverity; since: string }> {
  return BURN_SEVERITIES.flatMap((severity) => {
    const alert = doc.alerts?.[severity];
    return alert ? [{ severity, since: alert.since }] : [];
  });
}

/** The SLO as both APIs show it: its definition, its figures now, its active alerts. */
export function presentSlo(doc: SloDoc, from: number, to: number, figures: SloFigures): SloObject {
  return {
    id: doc.slo_id,
    team_id: doc.team_id,
    name: doc.name,
    endpoint_ids: doc.endpoint_ids,
    project_id: doc.project_id,
    objective_percent: doc.objective_percent,
    window_days: doc.window_days,
    latency_threshold_ms: doc.latency_threshold_ms,
    window: { from: new Date(from).toISOString(), to: new Date(to).toISOString() },
    good: figures.good,
    total: figures.total,
    sli_percent: figures.sli_percent,
    error_budget: figures.error_budget,
    burn_rates: figures.burn_rates,
    alerts: activeAlerts(doc),
    status: figures.status,
    created_at: doc.created_at,
    updated_at: doc.updated_at,
  };
}

/** Reads of both APIs: the application API's (admin) and the Developer API's (analytics:read). */
@Injectable()
export class SloReads {
  private readonly cursors: CursorCodec;
  readonly counter: SloCounter;

  constructor(@Inject(PLATFORM) private readonly platform: Platform) {
    this.cursors = new CursorCodec(platform.cursorKey);
    this.counter = SloCounter.of(platform);
  }

  async doc(teamId: number, sloId: number): Promise<SloDoc> {
    const doc = (await this.platform.reader.get(SLOS_PROJECTION, SLOS_COLLECTION, sloId)) as unknown as SloDoc | null;
    if (!doc || doc.team_id !== teamId) throw new SloNotFoundError('The SLO');
    return doc;
  }

  async present(doc: SloDoc, now = Date.now()): Promise<SloObject> {
    const { from, to, figures } = await this.counter.figures(doc, now, activeAlerts(doc).length > 0);
    return presentSlo(doc, from, to, figures);
  }

  async one(teamId: number, sloId: number): Promise<SloObject> {
    return this.present(await this.doc(teamId, sloId));
  }

  /** By id ascending; `list` names the API the cursor was issued by (a cursor serves one list only). */
  async list(teamId: number, limit: number, cursor: string | undefined, list: 'admin' | 'public'): Promise<{ data: SloObject[]; pagination: Pagination }> {
    const bound = { list: `slos:${list}`, team_id: teamId };
    const after = this.cursors.decode(cursor, bound);
    const rows = await this.platform.reader.find(SLOS_PROJECTION, SLOS_COLLECTION, { filter: { team_id: teamId }, sort: SORT, after, limit: limit + 1 });
    const page = this.cursors.page(rows, limit, SORT, bound);
    const now = Date.now();
    const data = await Promise.all(page.rows.map((row) => this.present(row as unknown as SloDoc, now)));
    return { data, pagination: page.pagination };
  }

  /** Every live SLO of every team (metrics), by id. */
  async all(): Promise<SloDoc[]> {
    const docs: SloDoc[] = [];
    let after: Array<string | number> | undefined;
    for (;;) {
      const page = (await this.platform.reader.find(SLOS_PROJECTION, SLOS_COLLECTION, { sort: [['slo_id', 'asc']], after, limit: 500 })) as unknown as SloDoc[];
      docs.push(...page);
      if (page.length < 500) return docs;
      after = [page[page.length - 1].slo_id];
    }
  }
}
