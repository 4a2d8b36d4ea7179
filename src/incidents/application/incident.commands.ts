import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { CommandContext } from '../../platform/es/command-context.js';
import type { StreamCache } from '../../platform/es/stream-cache.js';
import { currentIdempotency } from '../../platform/es/idempotency-scope.js';
import { runStreamCommand, type StreamFold } from '../../platform/es/stream-command.js';
import type { NewEvent } from '../../platform/event-store/event-store.port.js';
import type { CheckedBody } from '../../platform/http/validation.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { toIncidentDetail, type IncidentDetail } from '../domain/detail-view.js';
import { IncidentMergedError, IncidentValidationError, UnknownIdError, type RuleViolation } from '../domain/errors.js';
import { incidentStreamId, type JsonObject } from '../domain/events.js';
import { decide, initialState, replay, type Incident, type IncidentCommand, type IncidentState, type StatusRef } from '../domain/incident.js';
import { createRules, statusRules, updateDetailsRules, type CreateIncidentInput, type IncidentDetailChanges, type StatusInput } from '../domain/validation.js';
import { logIncidentChanges } from './incident-log.js';
import { incidentAggregate, incidentStreams, loadTeamIncident, MonitoringFacts, statusFacts, teamStatuses } from './lookups.js';

/** The revision each state handed out by writableIncident was folded to (see runIncidentCommand's `loaded`). */
const loadedRevisions = new WeakMap<Incident, number>();

/** Checks order after auth/idempotency (done by hooks): path incident (404), merged (409), body (400). */
export async function writableIncident(platform: Platform, teamId: number, incidentId: number): Promise<Incident> {
  const loaded = await loadTeamIncident(platform, teamId, incidentId);
  if (!loaded) throw new UnknownIdError('incident');
  const incident = loaded.state;
  loadedRevisions.set(incident, loaded.revision);
  if (incident.merged_into_id !== null) throw new IncidentMergedError(incident.id, incident.merged_into_id);
  return incident;
}

export function failIfInvalid(errors: RuleViolation[]): void {
  if (errors.length > 0) throw new IncidentValidationError(errors);
}

/** Concurrent writers to one incident retry on a fresh fold (a cheap tail read), so a few more attempts. */
const INCIDENT_ATTEMPTS = 8;

/**
 * Runs one domain command on an incident stream with optimistic concurrency (reload and decide
 * again on a concurrent append), waits until the views that handle its events show the result,
 * and returns the state after the command.
 *
 * The stream is folded forward by this process's cache (reads only new events), and the state
 * after the command is kept there, so the next command reads nothing back. `loaded`, the state
 * writableIncident returned for this command, is decided on as it is (or this process's fold,
 * when its own commands appended since): the command then reads its stream once; if another
 * process appended since, the append fails and the retry folds on. `loaded` 'new': the stream is
 * one no command has written yet (an id just taken from the incident sequence), decided on as
 * empty without reading it; should it exist after all, the append expecting no stream fails and
 * the retry reads it.
 */
export async function runIncidentCommand(platform: Platform, incidentId: number, context: CommandContext, command: IncidentCommand, loaded?: Incident | 'new'): Promise<Incident> {
  const written = await runStreamCommand<IncidentState, IncidentState>(
    platform.events,
    incidentStreamId(incidentId),
    incidentAggregate,
    context,
    (state) => {
      const events = decide(state, command, { now: new Date().toISOString() });
      // The state after the command is both its result and what the fold keeps (one fold, not two).
      const after = replay(events, state);
      return { events: events as NewEvent[], result: after, after };
    },
    // A retry of a keyed request answers the incident as the first attempt left it. Commands
    // given their ids by one reservation append in the same turn: grouped, they share a commit
    // (unless another command waits in line on the incident; see `groupCommit`).
    { resultAfter: (state) => state, fold: startingFrom(incidentStreams(platform), loaded), foldOwnAppends: true, attempts: INCIDENT_ATTEMPTS, groupCommit: true },
  );
  const result = written.result as Incident | null;
  logIncidentChanges(platform.logger, written.appended, result?.team_id);
  await platform.freshness.require(written);
  return result as Incident;
}

/**
 * The fold, with the first load answered by `loaded` when it is a state writableIncident handed
 * out, or by what this process folded since when that is newer (a command that waited its turn
 * behind others on the incident decides on their appends, not on the state it was checked on).
 */
function startingFrom(fold: StreamCache<IncidentState>, loaded: Incident | 'new' | undefined): StreamFold<IncidentState> {
  // A keyed request reads the stream even when new: a retry may find its first attempt's append there.
  let known = loaded === undefined ? undefined : loaded === 'new' ? (currentIdempotency() ? undefined : -1) : loadedRevisions.get(loaded);
  return {
    load: async (streamId) => {
      if (known === undefined) return fold.load(streamId);
      const revision = known;
      known = undefined;
      const since = fold.peek(streamId);
      if (since !== undefined && since.revision > revision) return since;
      return { state: loaded === 'new' ? initialState() : (loaded as IncidentState), revision };
    },
    remember: (streamId, entry) => fold.remember(streamId, entry),
  };
}

/** The status a body or a query names by its exact name or its id (the name first). */
export function resolveStatus(statuses: StatusRef[], input: { status?: string; status_id?: number }): StatusRef | undefined {
  if (input.status !== undefined) return statuses.find((s) => s.name === input.status);
  if (input.status_id !== undefined) return statuses.find((s) => s.id === input.status_id);
  return undefined;
}

/** The edge's errors and the domain's, in one 400. */
function failIfAny(...lists: RuleViolation[][]): void {
  failIfInvalid(lists.flat());
}

// ---------------------------------------------------------------------------------------------

/** `scope` (the HTTP request): the command's view lookups share one look at the read store (`ReadStore.stamps`). */
export class CreateIncident extends Command<IncidentDetail> {
  constructor(readonly teamId: number, readonly body: CheckedBody<CreateIncidentInput>, readonly context: CommandContext, readonly scope?: object) {
    super();
  }
}

@CommandHandler(CreateIncident)
export class CreateIncidentHandler implements ICommandHandler<CreateIncident> {
  private readonly monitoring: MonitoringFacts;
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {
    this.monitoring = new MonitoringFacts(platform);
  }

  async execute({ teamId, body, context, scope }: CreateIncident): Promise<IncidentDetail> {
    const input = body.value;
    const statuses = await teamStatuses(this.platform, teamId, scope);
    const endpointIds = input.endpoint_ids ?? [];
    const facts = {
      statuses: statusFacts(statuses),
      projectIds: await this.monitoring.projectIds(teamId, input.project_id === undefined ? [] : [input.project_id], scope),
      endpointProjects: await this.monitoring.endpointProjects(teamId, endpointIds, scope),
      now: new Date().toISOString(),
    };
    failIfAny(body.errors, createRules(input, facts));
    const status = resolveStatus(facts.statuses, input) ?? statuses.find((s) => s.is_default) ?? statuses[0];
    if (!status) throw new IncidentValidationError([{ field: 'status_id', code: 'not_found', message: 'the team has no incident statuses' }]);
    const projectId = input.project_id ?? facts.endpointProjects[endpointIds[0]];
    const incidentId = await this.platform.ids.next('incident');
    const state = await runIncidentCommand(this.platform, incidentId, context, {
      kind: 'create',
      incident_id: incidentId,
      team_id: teamId,
      project_id: projectId,
      endpoint_ids: endpointIds,
      title: input.title,
      type: input.type,
      severity: input.severity,
      detection_reason: input.detection_reason,
      metadata: input.metadata as JsonObject | undefined,
      status: { id: status.id, name: status.name },
      auto_resolve: input.auto_resolve,
      first_error_at: input.first_error_at,
      last_error_at: input.last_error_at,
    }, 'new');
    return toIncidentDetail(state);
  }
}

// ---------------------------------------------------------------------------------------------

export class UpdateIncidentDetails extends Command<IncidentDetail> {
  constructor(readonly teamId: number, readonly incidentId: number, readonly body: CheckedBody<IncidentDetailChanges>, readonly context: CommandContext, readonly scope?: object) {
    super();
  }
}

@CommandHandler(UpdateIncidentDetails)
export class UpdateIncidentDetailsHandler implements ICommandHandler<UpdateIncidentDetails> {
  private readonly monitoring: MonitoringFacts;
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {
    this.monitoring = new MonitoringFacts(platform);
  }

  async execute({ teamId, incidentId, body, context, scope }: UpdateIncidentDetails): Promise<IncidentDetail> {
    const current = await writableIncident(this.platform, teamId, incidentId);
    const changes = body.value;
    const facts = {
      projectIds: await this.monitoring.projectIds(teamId, changes.project_id === undefined ? [] : [changes.project_id], scope),
      endpointProjects: await this.monitoring.endpointProjects(teamId, [...(changes.endpoint_ids ?? []), ...current.endpoint_ids], scope),
    };
    failIfAny(body.errors, updateDetailsRules(changes, current, facts));
    const state = await runIncidentCommand(this.platform, incidentId, context, { kind: 'update_details', changes: { ...changes } }, current);
    return toIncidentDetail(state);
  }
}

// ---------------------------------------------------------------------------------------------

export class UpdateIncidentStatus extends Command<IncidentDetail> {
  constructor(readonly teamId: number, readonly incidentId: number, readonly body: CheckedBody<StatusInput>, readonly context: CommandContext, readonly scope?: object) {
    super();
  }
}

@CommandHandler(UpdateIncidentStatus)
export class UpdateIncidentStatusHandler implements ICommandHandler<UpdateIncidentStatus> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, incidentId, body, context, scope }: UpdateIncidentStatus): Promise<IncidentDetail> {
    const current = await writableIncident(this.platform, teamId, incidentId);
    const statuses = statusFacts(await teamStatuses(this.platform, teamId, scope));
    const input = body.value;
    failIfAny(body.errors, statusRules(input, statuses));
    const state = await runIncidentCommand(this.platform, incidentId, context, {
      kind: 'update_status',
      status: resolveStatus(statuses, input),
      resolved: input.resolved,
      auto_resolve: input.auto_resolve,
    }, current);
    return toIncidentDetail(state);
  }
}
