import type { Platform } from '../../../platform/platform.js';
import { CursorCodec, type Pagination } from '../../../platform/http/pagination.js';
import type { Doc, Filter, FieldCondition, Scalar, SortDirection } from '../../../platform/read-store/read-store.port.js';
import { DETAIL_CHECKS, toCheck, toIncidentDetail, toIncidentSummary, type IncidentDetail, type IncidentSummary } from '../../domain/detail-view.js';
import type { Checkpoint, Comment, LinkedCheck } from '../../domain/events.js';
import type { Incident } from '../../domain/incident.js';
import { IdList } from '../../domain/id-list.js';
import {
  INCIDENT_CHECKPOINTS,
  INCIDENT_CHECKS,
  INCIDENT_COMMENTS,
  INCIDENTS,
  INCIDENTS_VIEW,
  type CheckpointDoc,
  type CommentDoc,
  type IncidentDoc,
  type LinkedCheckDoc,
} from './view.js';

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
/** Like every list of checks (api-decisions: Pagination): newest first. */
const CHECKS_SORT: Array<[string, SortDirection]> = [['checked_at', 'desc'], ['check_id', 'desc']];
const OLDEST_FIRST = (time: string, id: string): Array<[string, SortDirection]> => [[time, 'asc'], [id, 'asc']];

/** Reads of the incidents view. An incident of another team is reported as missing. */
export class IncidentQueries {
  private readonly cursors: CursorCodec;
  constructor(private readonly platform: Platform) {
    this.cursors = new CursorCodec(platform.cursorKey);
  }

  /** The incident's document; null when missing or of another team. */
  async head(teamId: number, incidentId: number): Promise<IncidentDoc | null> {
    const doc = (await this.platform.reader.get(INCIDENTS_VIEW, INCIDENTS, incidentId)) as unknown as IncidentDoc | null;
    return doc && doc.team_id === teamId ? doc : null;
  }

  /** Assembled from the incident's document and its items: every comment and checkpoint, the newest checks. */
  async detail(teamId: number, incidentId: number): Promise<IncidentDetail | null> {
    const doc = await this.head(teamId, incidentId);
    if (!doc) return null;
    if (isWholeIncidentDoc(doc)) return toIncidentDetail(wholeState(doc));
    const items = <T>(collection: string, sort: Array<[string, SortDirection]>, limit?: number) =>
      this.platform.reader.find(INCIDENTS_VIEW, collection, { filter: { incident_id: incidentId }, sort, limit }) as unknown as Promise<T[]>;
    const [comments, checkpoints, newestChecks] = await Promise.all([
      items<CommentDoc>(INCIDENT_COMMENTS, OLDEST_FIRST('created_at', 'comment_id')),
      items<CheckpointDoc>(INCIDENT_CHECKPOINTS, OLDEST_FIRST('created_at', 'checkpoint_id')),
      items<LinkedCheckDoc>(INCIDENT_CHECKS, CHECKS_SORT, DETAIL_CHECKS),
    ]);
    const state: Incident = {
      ...doc.state,
      comments: IdList.of(comments.map((d) => d.comment)),
      checkpoints: IdList.of(checkpoints.map((d) => d.checkpoint)),
      checks: IdList.of(newestChecks.map((d) => d.check)),
    };
    return toIncidentDetail(state, doc.checks_total);
  }

  /** Every check linked to the incident, newest first, a page at a time. */
  async checks(head: IncidentDoc, limit: number, cursor: string | undefined): Promise<{ data: LinkedCheck[]; pagination: Pagination }> {
    const incidentId = head.incident_num;
    const boundFilters = { incident: incidentId, list: 'checks' };
    const after = this.cursors.decode(cursor, boundFilters);
    const rows = isWholeIncidentDoc(head)
      ? checksPageOf(wholeState(head), after, limit + 1)
      : await this.platform.reader.find(INCIDENTS_VIEW, INCIDENT_CHECKS, { filter: { incident_id: incidentId }, sort: CHECKS_SORT, after, limit: limit + 1 });
    const page = this.cursors.page(rows, limit, CHECKS_SORT, boundFilters);
    return { data: page.rows.map((doc) => toCheck((doc as unknown as LinkedCheckDoc).check)), pagination: page.pagination };
  }

  async list(teamId: number, filters: IncidentListFilters, limit: number, cursor: string | undefined): Promise<{ data: IncidentSummary[]; pagination: Pagination }> {
    const boundFilters = { team: teamId, ...filters };
    const after = this.cursors.decode(cursor, boundFilters);
    const rows = await this.platform.reader.find(INCIDENTS_VIEW, INCIDENTS, { filter: toFilter(teamId, filters), sort: SORT, after, limit: limit + 1 });
    const page = this.cursors.page(rows, limit, SORT, boundFilters);
    return { data: page.rows.map((doc) => toIncidentSummary(doc.state as Incident)), pagination: page.pagination };
  }
}

/**
 * A document of the first version of the view, which held the whole incident in one document. It
 * still serves while a process that upgraded rebuilds the view into the new shape (the item
 * collections do not exist in that generation), so reads answer from it as they did.
 */
function isWholeIncidentDoc(doc: IncidentDoc): boolean {
  return doc.checks_total === undefined;
}

function wholeState(doc: IncidentDoc): Incident {
  const state = doc.state as IncidentDoc['state'] & { comments?: Comment[]; checkpoints?: Checkpoint[]; checks?: LinkedCheck[] };
  return { ...state, comments: IdList.of(state.comments ?? []), checkpoints: IdList.of(state.checkpoints ?? []), checks: IdList.of(state.checks ?? []) };
}

/** The page of `incident_checks` rows the keyset query would answer, from a whole-incident document. */
function checksPageOf(state: Incident, after: Scalar[] | undefined, limit: number): Doc[] {
  const rows = state.checks
    .toArray()
    .map((check) => ({ id: String(check.id), checked_at: check.checked_at, check_id: check.id, check }))
    .sort((a, b) => (a.checked_at < b.checked_at ? 1 : a.checked_at > b.checked_at ? -1 : b.check_id - a.check_id));
  const [afterTime, afterId] = (after ?? []) as [string | undefined, number | undefined];
  const start = afterTime === undefined ? 0 : rows.findIndex((row) => row.checked_at < afterTime || (row.checked_at === afterTime && row.check_id < (afterId as number)));
  return start < 0 ? [] : rows.slice(start, start + limit);
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
