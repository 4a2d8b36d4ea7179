import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { CommandContext } from '../../platform/es/command-context.js';
import { loadStream } from '../../platform/es/stream-command.js';
import type { RecordedEvent } from '../../platform/event-store/event-store.port.js';
import type { CheckedBody } from '../../platform/http/validation.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { toIncidentDetail, type IncidentDetail } from '../domain/detail-view.js';
import { IncidentMergedError, IncidentValidationError, UnknownIdError } from '../domain/errors.js';
import { INCIDENT_MERGED_INTO, INCIDENT_RESOLVED, incidentStreamId, type IncidentEvent, type IncidentMergedIntoData, type IncidentResolvedData } from '../domain/events.js';
import { replay, type Incident } from '../domain/incident.js';
import { mergeFailureReason } from '../domain/merge-failure.js';
import { mergeRules } from '../domain/validation.js';
import { failIfInvalid, runIncidentCommand, writableIncident } from './incident.commands.js';
import { incidentAggregate } from './lookups.js';
import { millisOf } from '../../platform/time/rfc3339.js';

/**
 * A mark whose merge reached neither the target nor a release in this long is taken to be
 * abandoned (its process died), and a later merge of that source into the same target may
 * finish it. The same bound the idempotency layer uses before taking over a key whose request
 * died: a live merge finishes or releases within seconds.
 */
export const MERGE_ABANDONED_AFTER_MS = 60_000;

export class MergeIncidents extends Command<IncidentDetail> {
  constructor(
    readonly teamId: number,
    readonly targetId: number,
    readonly body: CheckedBody<{ source_incident_ids: number[] }>,
    readonly context: CommandContext,
    /** Names this merge on the marks it leaves: the same for retries with one Idempotency-Key. */
    readonly mergeId: string,
  ) {
    super();
  }
}

interface SourceStream {
  state: Incident;
  events: RecordedEvent[];
}

/** A source this merge holds: marked (or adopted) into the target, with its pre-merge content. */
interface HeldSource {
  id: number;
  before: Incident;
}

/**
 * Merge, across one stream per incident (no multi-stream transaction):
 *
 * 1. Validate: every source exists in the team, is not the target, is listed once and was not
 *    merged before. A source marked into THIS target but never absorbed counts as not merged
 *    only when this merge left the mark (a retry with the same Idempotency-Key) or the mark
 *    was abandoned (older than MERGE_ABANDONED_AFTER_MS); a mark of a merge still running is
 *    "already merged" (400), so two requests never both finish or release one mark.
 * 2. Mark each source, one stream at a time (IncidentResolved by merge if open, then
 *    IncidentMergedInto with this merge's id). From then on the source refuses writes (409),
 *    so its content can no longer change under us. Each append carries the expected revision:
 *    a source merged by a concurrent request meanwhile fails this merge with 400.
 * 3. Append IncidentsAbsorbed to the target with each source's content as it was just before
 *    its mark (rebuilt from the source's own stream, so nothing is lost).
 *
 * A failure in 2 or 3 (a source or the target merged by a concurrent request, the target
 * busy beyond the retries, a store error) releases every source this merge holds with
 * IncidentMergeReleased, which restores the source's pre-merge content and makes it writable;
 * then the request answers the failure. So a merge either completes, or fails leaving no source
 * merged into a target that does not list it, and each released source's history shows the
 * mark and its release. If the process dies between 2 and 3 (or a release cannot be written),
 * the marks stay with this merge's id: a retry with the same key (5xx answers are not stored,
 * and a dead request's key is taken over after a minute) or, once abandoned, any merge of those
 * sources into that target finishes step 3; the content is in the sources' streams meanwhile.
 */
@CommandHandler(MergeIncidents)
export class MergeIncidentsHandler implements ICommandHandler<MergeIncidents> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, targetId, body, context, mergeId }: MergeIncidents): Promise<IncidentDetail> {
    const target = await writableIncident(this.platform, teamId, targetId);
    const ids = sourceIds(body.value.source_incident_ids);
    const sources = await this.loadSources(teamId, ids);
    const facts: Record<number, { merged_into_id: number | null }> = {};
    for (const [id, source] of sources) facts[id] = { merged_into_id: ownMark(source, target, mergeId) ? null : source.state.merged_into_id };
    failIfInvalid([...body.errors, ...mergeRules(body.value.source_incident_ids ?? [], targetId, facts)]);

    const held: HeldSource[] = [];
    try {
      for (const [index, id] of ids.entries()) held.push(await this.holdSource(id, index, target, mergeId, context));
      const state = await runIncidentCommand(this.platform, targetId, context, { kind: 'absorb_sources', sources: held.map((s) => s.before) });
      return toIncidentDetail(state);
    } catch (error) {
      await this.release(held, targetId, mergeId, context, error);
      throw error;
    }
  }

  private async loadSources(teamId: number, ids: number[]): Promise<Map<number, SourceStream>> {
    const found = new Map<number, SourceStream>();
    for (const id of ids) {
      const loaded = await this.loadSource(id);
      if (loaded && loaded.state.team_id === teamId) found.set(id, loaded);
    }
    return found;
  }

  private async loadSource(id: number): Promise<SourceStream | null> {
    const loaded = await loadStream(this.platform.events, incidentStreamId(id), incidentAggregate);
    return loaded.state ? { state: loaded.state, events: loaded.events } : null;
  }

  /** Marks the source into the target (or takes over a mark this merge may finish); returns its pre-merge content. */
  private async holdSource(id: number, index: number, target: Incident, mergeId: string, context: CommandContext): Promise<HeldSource> {
    const source = await this.loadSource(id);
    if (!source) throw new UnknownIdError('incident');
    if (source.state.merged_into_id !== null && !ownMark(source, target, mergeId)) throw mergedConcurrently(id, index);
    if (source.state.merged_into_id === null) {
      try {
        await runIncidentCommand(this.platform, id, context, { kind: 'mark_merged_into', target_id: target.id, merge_id: mergeId });
      } catch (error) {
        if (error instanceof IncidentMergedError) throw mergedConcurrently(id, index);
        throw error;
      }
      return { id, before: preMergeState((await this.loadSource(id))!.events) };
    }
    return { id, before: preMergeState(source.events) };
  }

  /**
   * Undoes this merge's marks after a failure. A source the target lists after all is left
   * merged (it is where it belongs). A release that cannot be written leaves the mark for a
   * retry (see the class comment); the request still answers the original failure.
   */
  private async release(held: HeldSource[], targetId: number, mergeId: string, context: CommandContext, failure: unknown): Promise<void> {
    if (held.length === 0) return;
    const reason = mergeFailureReason(failure);
    try {
      const target = await this.loadSource(targetId);
      const listed = new Set(target?.state.merged_incidents.map((m) => m.id) ?? []);
      for (const source of held.filter((s) => !listed.has(s.id))) {
        await runIncidentCommand(this.platform, source.id, context, { kind: 'release_merge', target_id: targetId, merge_id: mergeId, reason, restored: source.before });
      }
    } catch (error) {
      this.platform.logger.error({ err: error, target_id: targetId, merge_id: mergeId }, 'merge failed and its sources could not all be released; a retry of the merge finishes it');
    }
  }
}

function lastMark(events: readonly RecordedEvent[]): RecordedEvent<IncidentMergedIntoData> | null {
  for (let i = events.length - 1; i >= 0; i--) if (events[i].type === INCIDENT_MERGED_INTO) return events[i] as RecordedEvent<IncidentMergedIntoData>;
  return null;
}

/**
 * The source is marked into this target, the target has not absorbed it, and this merge may
 * finish it: the mark is its own (same merge id) or abandoned.
 */
function ownMark(source: SourceStream, target: Incident, mergeId: string): boolean {
  if (source.state.merged_into_id !== target.id) return false;
  if (target.merged_incidents.some((m) => m.id === source.state.id)) return false;
  const mark = lastMark(source.events);
  if (!mark) return false;
  return mark.data.merge_id === mergeId || Date.now() - millisOf(mark.recordedAt) >= MERGE_ABANDONED_AFTER_MS;
}

/**
 * The source as it stood just before its latest mark (its whole state if never marked): before
 * the IncidentMergedInto and the IncidentResolved by merge appended with it.
 */
function preMergeState(events: readonly RecordedEvent[]): Incident {
  const mark = lastMark(events);
  const before = events.find((e) => mark && e.revision === mark.revision - 1);
  const resolvedByMark = before?.type === INCIDENT_RESOLVED && (before.data as IncidentResolvedData).by === 'merge';
  const cut = mark ? (resolvedByMark ? before.revision : mark.revision) : Infinity;
  const kept = events.filter((e) => e.revision < cut).map((e) => ({ type: e.type, data: e.data }) as IncidentEvent);
  const state = replay(kept);
  if (!state) throw new UnknownIdError('incident');
  return { ...state, merged_into_id: null };
}

function mergedConcurrently(id: number, index: number): IncidentValidationError {
  return new IncidentValidationError([{ field: `source_incident_ids[${index}]`, code: 'conflict', message: `incident ${id} was merged by a concurrent request` }]);
}

/** The well-formed ids, each once (the edge reported the others). */
function sourceIds(ids: readonly unknown[] | undefined): number[] {
  return [...new Set((ids ?? []).filter((id): id is number => Number.isSafeInteger(id) && (id as number) > 0))];
}
