/**
 * The incidents view (projection `incidents`), defined here once: written by `projection.ts`,
 * read through `queries.ts` and by status pages and analytics (incident heads and checkpoints).
 *
 * One small document per incident, and one document per comment, checkpoint and linked check:
 * an event changes the incident's document and at most the few item documents it names, so the
 * cost of applying it does not grow with the incident (a hot incident's 5,000th comment, a long
 * outage's 50,000th check). The detail is assembled at read time.
 */
import type { Checkpoint, Comment, LinkedCheck } from '../../domain/events.js';
import type { Incident } from '../../domain/incident.js';

export const INCIDENTS_VIEW = 'incidents';

export const INCIDENTS = 'incidents';
export const INCIDENT_COMMENTS = 'incident_comments';
export const INCIDENT_CHECKPOINTS = 'incident_checkpoints';
export const INCIDENT_CHECKS = 'incident_checks';

/** The incident without its item lists (those live in their own collections). */
export type IncidentHead = Omit<Incident, 'comments' | 'checkpoints' | 'checks'>;

export interface IncidentDoc {
  id: string;
  incident_num: number;
  team_id: number;
  project_id: number;
  endpoint_ids: number[];
  status_id: number;
  state_name: 'open' | 'resolved';
  severity: string;
  type: string;
  source: string;
  last_error_at: string;
  merged_into_id: number | null;
  /** How many checks are linked (rows of `incident_checks` for this incident). Absent in a version-1 document. */
  checks_total: number;
  /**
   * The incident's reopenings, oldest first, each with the resolution it undid (absent until the
   * first): the head's `resolved_at` holds only the latest resolution, and a status page tells
   * its readers the incident was resolved, then reopened. The newest MAX_REOPENINGS are kept.
   */
  reopenings?: Reopening[];
  state: IncidentHead;
}

export interface Reopening {
  /** 1 for the incident's first reopening, and so on (kept when older ones are dropped). */
  n: number;
  resolved_at: string;
  reopened_at: string;
}

export const MAX_REOPENINGS = 20;

/**
 * A comment's document: id the comment's own id (comment ids come from one sequence, so no two
 * incidents' comments share one), kept by SQLite as the row's integer key. New comments then go
 * to the end of the table instead of to their incident's place in a text key's index: one random
 * page fewer in every comment's commit. A comment moved by a merge keeps its row (the source's
 * IncidentMergedInto deletes it, the target's IncidentsAbsorbed puts it back under the target).
 */
export interface CommentDoc {
  id: string;
  incident_id: number;
  comment_id: number;
  created_at: string;
  comment: Comment;
}

/** Other item documents: id `<incident id>:<item id>`, so an item moved by a merge is a new row. */
export interface CheckpointDoc {
  id: string;
  incident_id: number;
  checkpoint_id: number;
  created_at: string;
  checkpoint: Checkpoint;
}

export interface LinkedCheckDoc {
  id: string;
  incident_id: number;
  check_id: number;
  checked_at: string;
  check: LinkedCheck;
}

export const itemKey = (incidentId: number, itemId: number): string => `${incidentId}:${itemId}`;

export function toIncidentDoc(state: Incident, checksTotal: number, reopenings?: Reopening[]): IncidentDoc {
  const { comments: _comments, checkpoints: _checkpoints, checks: _checks, ...head } = state;
  const doc: IncidentDoc = {
    id: String(state.id),
    incident_num: state.id,
    team_id: state.team_id,
    project_id: state.project_id,
    endpoint_ids: [...state.endpoint_ids],
    status_id: state.status_id,
    state_name: state.resolved_at === null ? 'open' : 'resolved',
    severity: state.severity,
    type: state.type,
    source: state.source,
    last_error_at: state.last_error_at,
    merged_into_id: state.merged_into_id,
    checks_total: checksTotal,
    state: head,
  };
  // No key at all on an incident never reopened: every event rewrites the head.
  if (reopenings) doc.reopenings = reopenings;
  return doc;
}

/** `reopenings` with one more, the newest MAX_REOPENINGS kept. */
export function withReopening(reopenings: Reopening[] | undefined, reopening: Omit<Reopening, 'n'>): Reopening[] {
  const list = reopenings ?? [];
  const n = (list[list.length - 1]?.n ?? 0) + 1;
  return [...list, { n, ...reopening }].slice(-MAX_REOPENINGS);
}

export const commentKey = (commentId: number): string => String(commentId);

export const commentDoc = (incidentId: number, comment: Comment): CommentDoc => ({
  id: commentKey(comment.id),
  incident_id: incidentId,
  comment_id: comment.id,
  created_at: comment.created_at,
  comment,
});

export const checkpointDoc = (incidentId: number, checkpoint: Checkpoint): CheckpointDoc => ({
  id: itemKey(incidentId, checkpoint.id),
  incident_id: incidentId,
  checkpoint_id: checkpoint.id,
  created_at: checkpoint.created_at,
  checkpoint,
});

export const linkedCheckDoc = (incidentId: number, check: LinkedCheck): LinkedCheckDoc => ({
  id: itemKey(incidentId, check.id),
  incident_id: incidentId,
  check_id: check.id,
  checked_at: check.checked_at,
  check,
});
