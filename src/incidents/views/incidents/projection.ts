import type { RecordedEvent } from '../../../platform/event-store/event-store.port.js';
import type { Doc } from '../../../platform/read-store/read-store.port.js';
import { defineProjection, type ProjectionHandler, type ViewTransaction } from '../../../platform/projections/projection.js';
import {
  CHECKPOINT_UPDATED,
  COMMENT_DELETED,
  COMMENT_UPDATED,
  INCIDENT_CHECK_LINKED,
  INCIDENT_EVENT_TYPES,
  INCIDENT_MERGED_INTO,
  INCIDENT_OPENED,
  INCIDENT_REOPENED,
  INCIDENTS_ABSORBED,
  type IncidentEvent,
  type LinkedCheck,
} from '../../domain/events.js';
import { evolve, type Incident } from '../../domain/incident.js';
import { IdList } from '../../domain/id-list.js';
import {
  checkpointDoc,
  commentDoc,
  commentKey,
  INCIDENT_CHECKPOINTS,
  INCIDENT_CHECKS,
  INCIDENT_COMMENTS,
  INCIDENTS,
  INCIDENTS_VIEW,
  itemKey,
  linkedCheckDoc,
  toIncidentDoc,
  withReopening,
  type CheckpointDoc,
  type CommentDoc,
  type IncidentDoc,
  type LinkedCheckDoc,
} from './view.js';

/**
 * `incidents`: the incident's own document (its summary fields, `checks_total`, and the flat
 * fields the list filters and keyset order use) plus one document per comment, checkpoint and
 * linked check (types and names: view.ts).
 *
 * Each event is folded with the domain's own evolve, so the view and the command side can never
 * disagree, but over a partial state: the incident's head plus only the items the event names
 * (the comment it edits, the checks it links). What the fold adds is written, what it drops is
 * deleted; nothing else is read or rewritten, so applying an event costs the same on the first
 * day of an outage as on the seventh.
 */
const apply: ProjectionHandler = async (recorded: RecordedEvent, views) => {
  const event = { type: recorded.type, data: recorded.data } as IncidentEvent;
  const incidentId = event.data.incident_id;
  // An incident's first event starts it from nothing (evolve ignores the state before it), so
  // there is no document to read: a create's read-your-writes wait skips a point read.
  const existing = event.type === INCIDENT_OPENED ? null : ((await views.get(INCIDENTS, String(incidentId))) as unknown as IncidentDoc | null);
  const touched = existing ? await touchedItems(views, incidentId, event) : { comments: [], checkpoints: [], checks: [] };
  // Object.assign, not a spread with the three lists: a spread's copy that then gains keys took
  // 11-13 us in V8 (each copy its own new shape), this 0.7 us, on every event but an incident's first.
  const before: Incident | null = existing
    ? Object.assign({}, existing.state, { comments: IdList.of(touched.comments), checkpoints: IdList.of(touched.checkpoints), checks: IdList.of(touched.checks) })
    : null;
  const after = evolve(before, event);
  if (!after) return;
  let checksTotal = existing?.checks_total ?? 0;
  if (event.type === INCIDENT_MERGED_INTO) {
    // The source's items moved to the target (its IncidentsAbsorbed writes them there).
    for (const collection of [INCIDENT_COMMENTS, INCIDENT_CHECKPOINTS, INCIDENT_CHECKS]) {
      for (const row of await views.find(collection, { filter: { incident_id: incidentId } })) views.delete(collection, row.id);
    }
    checksTotal = 0;
  } else {
    writeItems(views, INCIDENT_COMMENTS, touched.comments, after.comments.toArray(), (c) => commentDoc(incidentId, c));
    writeItems(views, INCIDENT_CHECKPOINTS, touched.checkpoints, after.checkpoints.toArray(), (c) => checkpointDoc(incidentId, c));
    const linkedBefore = before?.checks ?? IdList.empty<LinkedCheck>();
    for (const check of after.checks.toArray()) {
      if (linkedBefore.has(check.id)) continue;
      views.put(INCIDENT_CHECKS, asDoc(linkedCheckDoc(incidentId, check)));
      checksTotal++;
    }
  }
  const reopenings =
    event.type === INCIDENT_REOPENED
      ? withReopening(existing?.reopenings, { resolved_at: event.data.previous_resolved_at, reopened_at: event.data.reopened_at })
      : existing?.reopenings;
  views.put(INCIDENTS, asDoc(toIncidentDoc(after, checksTotal, reopenings)));
};

/**
 * The documents `apply` will read for an event, read ahead for a whole batch (one `getMany` per
 * collection instead of a point read per event: 20 clients commenting on 20 incidents). An
 * incident's first event reads nothing; a merge's and an absorption's reads are left to apply.
 */
function* readsOf(recorded: RecordedEvent): Iterable<readonly [string, string]> {
  const event = { type: recorded.type, data: recorded.data } as IncidentEvent;
  if (event.type === INCIDENT_OPENED) return;
  const incidentId = event.data.incident_id;
  yield [INCIDENTS, String(incidentId)];
  switch (event.type) {
    case COMMENT_UPDATED:
    case COMMENT_DELETED:
      yield [INCIDENT_COMMENTS, commentKey(event.data.comment_id)];
      break;
    case CHECKPOINT_UPDATED:
      yield [INCIDENT_CHECKPOINTS, itemKey(incidentId, event.data.checkpoint_id)];
      break;
    case INCIDENT_CHECK_LINKED:
      yield [INCIDENT_CHECKS, itemKey(incidentId, event.data.check.id)];
      break;
  }
}

/** The stored items an event reads or changes; every other item of the incident stays unread. */
async function touchedItems(views: ViewTransaction, incidentId: number, event: IncidentEvent) {
  const get = async <T>(collection: string, itemId: number) => (await views.get(collection, itemKey(incidentId, itemId))) as unknown as T | null;
  const present = <T>(rows: Array<T | null>) => rows.filter((row): row is T => row !== null);
  switch (event.type) {
    case COMMENT_UPDATED:
    case COMMENT_DELETED: {
      // Keyed by the comment's id alone: the incident's own comment, or none.
      const doc = (await views.get(INCIDENT_COMMENTS, commentKey(event.data.comment_id))) as unknown as CommentDoc | null;
      return { comments: doc?.incident_id === incidentId ? [doc.comment] : [], checkpoints: [], checks: [] };
    }
    case CHECKPOINT_UPDATED:
      return { comments: [], checkpoints: present([await get<CheckpointDoc>(INCIDENT_CHECKPOINTS, event.data.checkpoint_id)]).map((d) => d.checkpoint), checks: [] };
    case INCIDENT_CHECK_LINKED:
      return { comments: [], checkpoints: [], checks: present([await get<LinkedCheckDoc>(INCIDENT_CHECKS, event.data.check.id)]).map((d) => d.check) };
    case INCIDENTS_ABSORBED: {
      // Checks already linked to the target stay linked once.
      const ids = new Set(event.data.sources.flatMap((source) => source.checks.map((c) => c.id)));
      const rows = await Promise.all([...ids].map((id) => get<LinkedCheckDoc>(INCIDENT_CHECKS, id)));
      return { comments: [], checkpoints: [], checks: present(rows).map((d): LinkedCheck => d.check) };
    }
    default:
      return { comments: [], checkpoints: [], checks: [] };
  }
}

/** Puts the items the fold kept (new or changed) and deletes those it dropped. */
function writeItems<T extends { id: number }>(views: ViewTransaction, collection: string, before: T[], after: T[], toDoc: (item: T) => { id: string }): void {
  const kept = new Set(after.map((item) => item.id));
  for (const item of after) views.put(collection, asDoc(toDoc(item)));
  for (const item of before) if (!kept.has(item.id)) views.delete(collection, toDoc(item).id);
}

const asDoc = (doc: { id: string }): Doc => doc as unknown as Doc;

const byTeam = (...fields: string[]) => ({ fields: ['team_id', ...fields, 'incident_num'] });

/** A comment's key and list fields; `created_at` text, kept as written (the list sorts by it). */
const COMMENT_COLUMNS = { id: 'integer', comment_id: 'integer', incident_id: 'integer', created_at: 'text' } as const;

/** The fields the head's indexes are built on (`IncidentDoc`'s types); text for `last_error_at`, kept as written. */
const INCIDENT_COLUMNS = {
  id: 'integer',
  incident_num: 'integer',
  team_id: 'integer',
  project_id: 'integer',
  status_id: 'integer',
  state_name: 'text',
  severity: 'text',
  type: 'text',
  source: 'text',
  last_error_at: 'text',
} as const;

export const incidentsProjection = defineProjection({
  name: INCIDENTS_VIEW,
  // 2: comments, checkpoints and linked checks in their own collections (issue 11 item 8, issue 12 item 3).
  // 3: the head's indexed fields as typed columns (issue 31): every event rewrites the head, most
  // (comments, links, checkpoints) without changing them, and such a rewrite then leaves the
  // indexes untouched (the read store's `updateKept`) instead of dirtying a page of each.
  // 4: comments keyed by their own id, typed (issue 31): a comment's row goes to the end of the
  // table, its key index gone, and its list index reads columns, not its JSON (view.ts).
  // 5: the head keeps its reopenings (status pages show a reopened incident's history).
  version: 5,
  collections: [
    {
      name: INCIDENTS,
      columns: INCIDENT_COLUMNS,
      idField: 'incident_num',
      indexes: [
        byTeam(),
        byTeam('project_id'),
        byTeam('status_id'),
        byTeam('state_name'),
        byTeam('severity'),
        byTeam('type'),
        byTeam('source'),
        { fields: ['team_id', 'last_error_at'] },
        // Version 3 left out `team_id, merged_into_id`: no query reads it.
      ],
    },
    { name: INCIDENT_COMMENTS, columns: COMMENT_COLUMNS, idField: 'comment_id', indexes: [{ fields: ['incident_id', 'created_at', 'comment_id'] }] },
    { name: INCIDENT_CHECKPOINTS, indexes: [{ fields: ['incident_id', 'created_at', 'checkpoint_id'] }] },
    { name: INCIDENT_CHECKS, indexes: [{ fields: ['incident_id', 'checked_at', 'check_id'] }] },
  ],
  handlers: Object.fromEntries(INCIDENT_EVENT_TYPES.map((type) => [type, apply])),
  prefetch: readsOf,
  // Only this projection writes these collections, and `apply` reads an incident's head on
  // every event but its first: kept, a comment on an incident commented on before reads nothing
  // (the read-ahead's getMany was about 5 % of a comment's CPU). A create's head is written
  // where none was known, so it is not kept until an event reads it.
  keepsDocuments: true,
});
