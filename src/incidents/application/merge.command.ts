import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { CommandContext } from '../../platform/es/command-context.js';
import { loadStream } from '../../platform/es/stream-command.js';
import { Problems } from '../../platform/http/problem.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { toIncidentDetail, type IncidentDetail } from '../domain/detail-view.js';
import { IncidentMergedError } from '../domain/errors.js';
import { INCIDENT_MERGED_INTO, incidentStreamId, type IncidentEvent } from '../domain/events.js';
import { replay, type Incident } from '../domain/incident.js';
import { validateMerge } from '../domain/validation.js';
import { failIfInvalid, runIncidentCommand, writableIncident } from './incident.commands.js';
import { incidentAggregate } from './lookups.js';

export class MergeIncidents extends Command<IncidentDetail> {
  constructor(readonly teamId: number, readonly targetId: number, readonly body: unknown, readonly context: CommandContext) {
    super();
  }
}

/**
 * Merge, across one stream per incident (no multi-stream transaction):
 *
 * 1. Validate: every source exists in the team, is not the target, is listed once and was not
 *    merged before (a source already merged into THIS target but never absorbed is the leftover
 *    of an interrupted merge and is accepted, see below).
 * 2. Mark each source, one stream at a time (IncidentResolved by merge if open, then
 *    IncidentMergedInto). From then on the source refuses writes (409), so its content can no
 *    longer change under us. Each append carries the expected revision, so a concurrent write to
 *    a source reloads and decides again; a source merged elsewhere meanwhile is a 400.
 * 3. Append IncidentsAbsorbed to the target with each source's content as it was just before
 *    its IncidentMergedInto (rebuilt from the source's own stream, so nothing is lost).
 *
 * Why sources first: after step 2 nothing can be written to a source any more, so the snapshot
 * the target absorbs is final. A crash between 2 and 3 leaves sources marked `merged_into_id`
 * = target whose content is not yet on the target; the content is not lost (it is in the
 * source's stream), and retrying the merge (the idempotency layer does not store 5xx, so the
 * client's retry with the same key runs again) finds those sources "merged into this target,
 * not absorbed" and completes step 3. If a later source fails in step 2 after earlier ones
 * were marked, the marked ones are still absorbed (never stranded) and the request answers
 * the failure.
 */
@CommandHandler(MergeIncidents)
export class MergeIncidentsHandler implements ICommandHandler<MergeIncidents> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, targetId, body, context }: MergeIncidents): Promise<IncidentDetail> {
    const target = await writableIncident(this.platform, teamId, targetId);
    const ids = sourceIds(body);
    const sources = await this.loadSources(teamId, ids);
    const absorbed = new Set(target.merged_incidents.map((m) => m.id));
    const facts: Record<number, { merged_into_id: number | null }> = {};
    for (const [id, source] of sources) {
      const pending = source.state.merged_into_id === targetId && !absorbed.has(id);
      facts[id] = { merged_into_id: pending ? null : source.state.merged_into_id };
    }
    failIfInvalid(validateMerge(body, targetId, { sources: facts }));

    const marked: Incident[] = [];
    let failure: unknown = null;
    for (const id of ids) {
      try {
        marked.push(await this.markSource(id, targetId, context));
      } catch (error) {
        failure = error;
        break;
      }
    }
    const state = marked.length > 0 ? await runIncidentCommand(this.platform, targetId, context, { kind: 'absorb_sources', sources: marked }) : target;
    if (failure) throw failure;
    return toIncidentDetail(state);
  }

  private async loadSources(teamId: number, ids: number[]) {
    const found = new Map<number, { state: Incident }>();
    for (const id of ids) {
      const loaded = await loadStream(this.platform.events, incidentStreamId(id), incidentAggregate);
      if (loaded.state && loaded.state.team_id === teamId) found.set(id, { state: loaded.state });
    }
    return found;
  }

  /** Marks the source (unless an interrupted merge already did) and returns its pre-merge content. */
  private async markSource(id: number, targetId: number, context: CommandContext): Promise<Incident> {
    const current = (await loadStream(this.platform.events, incidentStreamId(id), incidentAggregate)).state;
    if (current && current.merged_into_id !== null && current.merged_into_id !== targetId) {
      throw Problems.validation([{ field: 'source_incident_ids', code: 'conflict', message: `incident ${id} was merged by a concurrent request` }]);
    }
    if (current && current.merged_into_id === null) {
      try {
        await runIncidentCommand(this.platform, id, context, { kind: 'mark_merged_into', target_id: targetId });
      } catch (error) {
        const merged = (error as { problem?: { code?: string } }).problem?.code === 'incident_merged' || error instanceof IncidentMergedError;
        if (!merged) throw error;
        throw Problems.validation([{ field: 'source_incident_ids', code: 'conflict', message: `incident ${id} was merged by a concurrent request` }]);
      }
    }
    return preMergeState(this.platform, id);
  }
}

/** The source as it stood just before its IncidentMergedInto (its whole state if not merged). */
async function preMergeState(platform: Platform, id: number): Promise<Incident> {
  const events = await platform.events.readStream(incidentStreamId(id));
  const cut = events.findIndex((e) => e.type === INCIDENT_MERGED_INTO);
  const kept = (cut === -1 ? events : events.slice(0, cut)).map((e) => ({ type: e.type, data: e.data }) as IncidentEvent);
  const state = replay(kept);
  if (!state) throw Problems.notFound('The incident');
  return cut === -1 ? state : { ...state, merged_into_id: null };
}

function sourceIds(body: unknown): number[] {
  const ids = (body as { source_incident_ids?: unknown } | null)?.source_incident_ids;
  return Array.isArray(ids) ? ids.filter((id): id is number => Number.isSafeInteger(id) && id > 0) : [];
}
