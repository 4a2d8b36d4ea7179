import type { Platform } from '../../platform/platform.js';
import { CursorCodec, type Pagination } from '../../platform/http/pagination.js';
import type { Filter, FieldCondition, SortDirection } from '../../platform/read-store/read-store.port.js';
import { toIncidentDetail, toIncidentSummary, type IncidentDetail, type IncidentSummary } from '../domain/detail-view.js';
import type { Incident } from '../domain/incident.js';
import { INCIDENTS_VIEW } from '../../../projections/incidents.js';

export interface IncidentListFilters {
  project_id?: number;
  endpoint_id?: number;
  status_id?: number;
  state?: 'open' | 'resolved';
  severity?: string;
  type?: string;
  source?: string;
  from?: string;
  to?: string;
}

const SORT: Array<[string, SortDirection]> = [['incident_num', 'desc']];

/** Reads of the incidents view. An incident of another team is reported as missing. */
export class IncidentQueries {
  private readonly cursors: CursorCodec;
  constructor(private readonly platform: Platform) {
    this.cursors = new CursorCodec(platform.cursorKey);
  }

  async detail(teamId: number, incidentId: number): Promise<IncidentDetail | null> {
    const doc = await this.platform.reader.get(INCIDENTS_VIEW, 'incidents', incidentId);
    if (!doc || doc.team_id !== teamId) return null;
    return toIncidentDetail(doc.state as Incident);
  }

  async list(teamId: number, filters: IncidentListFilters, limit: number, cursor: string | undefined): Promise<{ data: IncidentSummary[]; pagination: Pagination }> {
    const boundFilters = { team: teamId, ...filters };
    const after = this.cursors.decode(cursor, boundFilters);
    const rows = await this.platform.reader.find(INCIDENTS_VIEW, 'incidents', { filter: toFilter(teamId, filters), sort: SORT, after, limit: limit + 1 });
    const page = this.cursors.page(rows, limit, SORT, boundFilters);
    return { data: page.rows.map((doc) => toIncidentSummary(doc.state as Incident)), pagination: page.pagination };
  }
}

function toFilter(teamId: number, f: IncidentListFilters): Filter {
  const filter: Filter = { team_id: teamId };
  if (f.project_id !== undefined) filter.project_id = f.project_id;
  if (f.endpoint_id !== undefined) filter.endpoint_ids = { has: f.endpoint_id };
  if (f.status_id !== undefined) filter.status_id = f.status_id;
  if (f.state !== undefined) filter.state_name = f.state;
  if (f.severity !== undefined) filter.severity = f.severity;
  if (f.type !== undefined) filter.type = f.type;
  if (f.source !== undefined) filter.source = f.source;
  const range: FieldCondition = {};
  if (f.from !== undefined) range.gte = f.from;
  if (f.to !== undefined) range.lt = f.to;
  if (Object.keys(range).length > 0) filter.last_error_at = range;
  return filter;
}
