import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { CommandContext } from '../../platform/es/command-context.js';
import { appendOnly, loadStream, runStreamCommand, type Aggregate, type StreamCommandResult } from '../../platform/es/stream-command.js';
import type { NewEvent } from '../../platform/event-store/event-store.port.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { CHECK_RECORDED, type CheckRecordedData } from '../../checks/domain/check.js';
import { importedChecks, type ImportedCheckInput } from '../domain/check-import.js';
import { checkRegistration, decideEndpoint, endpointOfTeam, LIMITS, newVerificationToken, type DependencyFacts, type EndpointChanges, type EndpointCommand } from '../domain/endpoint.js';
import { alertRelations } from '../domain/endpoint-configuration.js';
import type { EndpointConfiguration } from '../domain/endpoint-configuration.js';
import { endpointSnapshotAggregate } from '../domain/endpoint-snapshot.js';
import { endpointStream, maintenanceStream, projectStream } from '../domain/events.js';
import { checksStream } from '../../checks/domain/check.js';
import { checkWindow, decideMaintenance, maintenanceScheduleAggregate, type MaintenanceCommand, type WindowRequest } from '../domain/maintenance-schedule.js';
import { checkProjectCreation, decideProject, isProjectOf, projectAggregate, type ProjectCommand } from '../domain/project.js';
import { projectHasEndpoints } from '../views/monitoring/queries.js';
import { teamExists as tenancyHasTeam } from '../../tenancy/views/tenancy/queries.js';

export const IMPORT_CHUNK = 500;

/** A chunk races every probe of the endpoint for the stream's next revision. */
const IMPORT_CHUNK_ATTEMPTS = 20;

/** Every endpoint field a client may set (hidden values included). */
export type EndpointInput = Partial<EndpointConfiguration> & { name?: string; description?: string; project_id?: number };

export class CreateProject extends Command<number> {
  constructor(readonly teamId: number, readonly input: { name: string; description?: string; incident_grouping_seconds?: number }, readonly context: CommandContext) {
    super();
  }
}

export class UpdateProject extends Command<void> {
  constructor(readonly teamId: number, readonly projectId: number, readonly input: { name?: string; description?: string; incident_grouping_seconds?: number }, readonly context: CommandContext) {
    super();
  }
}

/** Only a project without endpoints can be deleted (409 project_not_empty otherwise). */
export class DeleteProject extends Command<void> {
  constructor(readonly teamId: number, readonly projectId: number, readonly context: CommandContext) {
    super();
  }
}

export class RegisterEndpoint extends Command<number> {
  constructor(readonly teamId: number, readonly input: EndpointInput & { project_id: number; name: string; url: string }, readonly context: CommandContext) {
    super();
  }
}

export class UpdateEndpoint extends Command<void> {
  constructor(
    readonly teamId: number,
    readonly endpointId: number,
    readonly input: EndpointInput & { enabled?: boolean; maintenance_until?: string | null },
    readonly context: CommandContext,
  ) {
    super();
  }
}

/** Stops probing the endpoint and removes it from lists; its events and incidents stay. */
export class DeleteEndpoint extends Command<void> {
  constructor(readonly teamId: number, readonly endpointId: number, readonly context: CommandContext) {
    super();
  }
}

export class ScheduleMaintenanceWindow extends Command<number> {
  constructor(
    readonly teamId: number,
    readonly input: { project_id: number | null; endpoint_id: number | null; starts_at: string; ends_at: string; reason: string | null },
    readonly context: CommandContext,
  ) {
    super();
  }
}

export class CancelMaintenanceWindow extends Command<void> {
  constructor(readonly teamId: number, readonly windowId: number, readonly context: CommandContext) {
    super();
  }
}

export type { ImportedCheckInput };

export class ImportChecks extends Command<number> {
  constructor(readonly teamId: number, readonly endpointId: number, readonly checks: ImportedCheckInput[], readonly context: CommandContext) {
    super();
  }
}

// ---------------------------------------------------------------------------------------------
// Handlers: gather the facts a decision needs from other streams and views, run the decider on
// the command's stream through runStreamCommand, then wait until every view that handles the
// appended events shows them (read-your-writes; the views are found from the projections'
// handlers: an endpoint move waits for analytics, a deletion for the probing schedule).

async function teamExists(platform: Platform, teamId: number): Promise<boolean> {
  return tenancyHasTeam(platform.reader, teamId);
}

/** True when the project exists in the team (read from its stream, the truth). */
async function projectKnown(platform: Platform, teamId: number, projectId: number): Promise<boolean> {
  const { state } = await loadStream(platform.events, projectStream(projectId), projectAggregate);
  return isProjectOf(state, teamId);
}

/**
 * What the endpoints a new `depends_on` names are (read from their streams, the truth): those
 * that are not live endpoints of the team, and a path of `depends_on` leading from one of them
 * back to `endpointId` (null for a registration: nothing can depend on an id not yet given).
 * Undefined when there is nothing to look up (no list, or one the decider refuses anyway).
 */
async function dependencyFacts(platform: Platform, teamId: number, endpointId: number | null, dependsOn: number[] | undefined): Promise<DependencyFacts | undefined> {
  if (dependsOn === undefined || dependsOn.length === 0 || dependsOn.length > LIMITS.depends_on.max) return undefined;
  const parents = new Map<number, number[]>();
  const load = async (id: number): Promise<number[] | null> => {
    if (!parents.has(id)) {
      const { state } = await loadStream(platform.events, endpointStream(id), endpointSnapshotAggregate);
      if (state === null || state.team_id !== teamId) return null;
      parents.set(id, alertRelations(state.configuration).depends_on);
    }
    return parents.get(id) ?? null;
  };
  const unknown: number[] = [];
  for (const id of dependsOn) if (id !== endpointId && (await load(id)) === null) unknown.push(id);
  if (endpointId === null || unknown.length > 0) return { unknown, cycle: null };
  // Depth-first over what the named endpoints depend on, each endpoint visited once.
  const visited = new Set<number>();
  const pathTo = async (id: number, path: number[]): Promise<number[] | null> => {
    if (id === endpointId) return [...path, id];
    if (visited.has(id)) return null;
    visited.add(id);
    for (const next of (await load(id)) ?? []) {
      const found = await pathTo(next, [...path, id]);
      if (found) return found;
    }
    return null;
  };
  for (const id of dependsOn) {
    if (id === endpointId) continue;
    const cycle = await pathTo(id, [endpointId]);
    if (cycle) return { unknown, cycle };
  }
  return { unknown, cycle: null };
}

/** One command on one stream: decide on its fold, append what was decided (nothing when it refuses). */
function runDecider<S, C>(platform: Platform, stream: string, aggregate: Aggregate<S>, decide: (state: S, command: C) => NewEvent[], command: C, context: CommandContext) {
  return runStreamCommand(platform.events, stream, aggregate, context, (state) => ({ events: decide(state, command), result: undefined }));
}

const runProjectCommand = (platform: Platform, projectId: number, command: ProjectCommand, context: CommandContext) =>
  runDecider(platform, projectStream(projectId), projectAggregate, decideProject, command, context);

const runEndpointCommand = (platform: Platform, endpointId: number, command: EndpointCommand, context: CommandContext) =>
  runDecider(platform, endpointStream(endpointId), endpointSnapshotAggregate, decideEndpoint, command, context);

const runMaintenanceCommand = (platform: Platform, teamId: number, command: MaintenanceCommand, context: CommandContext) =>
  runDecider(platform, maintenanceStream(teamId), maintenanceScheduleAggregate, decideMaintenance, command, context);

/** An import's views take longer to apply the more checks it holds: 5 s plus 2 s per 1,000 checks. */
/** An import's views apply every check it recorded: 2 ms each on top of the read-your-writes bound. */
const importExtraWaitMs = (checks: number) => 2 * checks;

@CommandHandler(CreateProject)
export class CreateProjectHandler implements ICommandHandler<CreateProject> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, input, context }: CreateProject): Promise<number> {
    const request = { team_id: teamId, team_exists: await teamExists(this.platform, teamId) };
    checkProjectCreation(request);
    const projectId = await this.platform.ids.next('project');
    const written = await runProjectCommand(
      this.platform,
      projectId,
      { kind: 'create_project', ...request, project_id: projectId, name: input.name, description: input.description ?? '', incident_grouping_seconds: input.incident_grouping_seconds, created_at: new Date().toISOString() },
      context,
    );
    await this.platform.freshness.require(written);
    return projectId;
  }
}

@CommandHandler(UpdateProject)
export class UpdateProjectHandler implements ICommandHandler<UpdateProject> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, projectId, input, context }: UpdateProject): Promise<void> {
    const command: ProjectCommand = { kind: 'update_project', project_id: projectId, team_id: teamId, name: input.name, description: input.description, incident_grouping_seconds: input.incident_grouping_seconds, updated_at: new Date().toISOString() };
    await this.platform.freshness.require(await runProjectCommand(this.platform, projectId, command, context));
  }
}

@CommandHandler(DeleteProject)
export class DeleteProjectHandler implements ICommandHandler<DeleteProject> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, projectId, context }: DeleteProject): Promise<void> {
    // Every write waits for the monitoring view before answering, so the view lists every
    // endpoint an earlier request registered or moved into this project.
    const hasEndpoints = await projectHasEndpoints(this.platform.reader, teamId, projectId);
    const command: ProjectCommand = { kind: 'delete_project', project_id: projectId, team_id: teamId, has_endpoints: hasEndpoints, deleted_at: new Date().toISOString() };
    await this.platform.freshness.require(await runProjectCommand(this.platform, projectId, command, context));
  }
}

/** The body's identity fields and flags apart from the configuration fields it sets. */
function endpointChanges(input: EndpointInput & { enabled?: boolean; maintenance_until?: string | null }): EndpointChanges {
  const { name, description, project_id, enabled, maintenance_until, ...configuration } = input;
  return { name, description, project_id, enabled, maintenance_until, configuration: configuration as Partial<EndpointConfiguration> };
}

@CommandHandler(RegisterEndpoint)
export class RegisterEndpointHandler implements ICommandHandler<RegisterEndpoint> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, input, context }: RegisterEndpoint): Promise<number> {
    const team_exists = await teamExists(this.platform, teamId);
    const registration = {
      team_id: teamId,
      project_id: input.project_id,
      name: input.name,
      description: input.description ?? '',
      configuration: { ...endpointChanges(input).configuration, url: input.url },
      team_exists,
      // The team's 404 comes first: its projects are only looked up for a team that exists.
      project_known: team_exists && (await projectKnown(this.platform, teamId, input.project_id)),
      dependencies: team_exists ? await dependencyFacts(this.platform, teamId, null, input.depends_on) : undefined,
    };
    checkRegistration(registration);
    const endpointId = await this.platform.ids.next('endpoint');
    const written = await runEndpointCommand(
      this.platform,
      endpointId,
      { kind: 'register_endpoint', ...registration, endpoint_id: endpointId, verification_token: newVerificationToken(), created_at: new Date().toISOString() },
      context,
    );
    await this.platform.freshness.require(written);
    return endpointId;
  }
}

@CommandHandler(UpdateEndpoint)
export class UpdateEndpointHandler implements ICommandHandler<UpdateEndpoint> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, endpointId, input, context }: UpdateEndpoint): Promise<void> {
    const changes = endpointChanges(input);
    const project_known = changes.project_id === undefined || (await projectKnown(this.platform, teamId, changes.project_id));
    const dependencies = await dependencyFacts(this.platform, teamId, endpointId, changes.configuration.depends_on);
    const command: EndpointCommand = { kind: 'update_endpoint', endpoint_id: endpointId, team_id: teamId, changes, project_known, dependencies, at: new Date().toISOString() };
    // A move changes which project's analytics count the endpoint: the analytics endpoints view
    // handles the move, so the answer waits for it too.
    await this.platform.freshness.require(await runEndpointCommand(this.platform, endpointId, command, context));
  }
}

@CommandHandler(DeleteEndpoint)
export class DeleteEndpointHandler implements ICommandHandler<DeleteEndpoint> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, endpointId, context }: DeleteEndpoint): Promise<void> {
    const command: EndpointCommand = { kind: 'delete_endpoint', endpoint_id: endpointId, team_id: teamId, deleted_at: new Date().toISOString() };
    // Answers once lists, the probing schedule and analytics (each handles the deletion) no longer show it.
    await this.platform.freshness.require(await runEndpointCommand(this.platform, endpointId, command, context));
  }
}

@CommandHandler(ScheduleMaintenanceWindow)
export class ScheduleMaintenanceWindowHandler implements ICommandHandler<ScheduleMaintenanceWindow> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, input, context }: ScheduleMaintenanceWindow): Promise<number> {
    const request = await this.windowRequest(teamId, input);
    checkWindow(request);
    const windowId = await this.platform.ids.next('maintenance_window');
    const written = await runMaintenanceCommand(
      this.platform,
      teamId,
      { kind: 'schedule_window', ...request, window_id: windowId, created_at: new Date().toISOString() },
      context,
    );
    await this.platform.freshness.require(written);
    return windowId;
  }

  /** The window with what the rules need to know of the team, the project and the endpoint it names. */
  private async windowRequest(teamId: number, input: ScheduleMaintenanceWindow['input']): Promise<WindowRequest> {
    const team_exists = await teamExists(this.platform, teamId);
    if (!team_exists) return { ...input, team_id: teamId, team_exists, project_known: false, endpoint: null };
    const project_known = input.project_id !== null && (await projectKnown(this.platform, teamId, input.project_id));
    let endpoint: WindowRequest['endpoint'] = null;
    if (input.endpoint_id !== null) {
      const { state } = await loadStream(this.platform.events, endpointStream(input.endpoint_id), endpointSnapshotAggregate);
      if (state !== null && state.team_id === teamId) endpoint = { project_id: state.project_id };
    }
    return { ...input, team_id: teamId, team_exists, project_known, endpoint };
  }
}

@CommandHandler(CancelMaintenanceWindow)
export class CancelMaintenanceWindowHandler implements ICommandHandler<CancelMaintenanceWindow> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, windowId, context }: CancelMaintenanceWindow): Promise<void> {
    const command: MaintenanceCommand = { kind: 'cancel_window', team_id: teamId, window_id: windowId, cancelled_at: new Date().toISOString() };
    await this.platform.freshness.require(await runMaintenanceCommand(this.platform, teamId, command, context));
  }
}

/**
 * Appends in chunks of IMPORT_CHUNK, each through runStreamCommand with the check stream's
 * expected revision (probes recording meanwhile make a chunk retry, never interleave). Imported
 * checks never raise alerts, so a chunk decides on nothing but where the stream ends. Under an
 * Idempotency-Key the id range is recorded under the key and each chunk is one step of the
 * request: a retry after a crash midway gets the same ids and appends only the missing chunks.
 */
@CommandHandler(ImportChecks)
export class ImportChecksHandler implements ICommandHandler<ImportChecks> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, endpointId, checks, context }: ImportChecks): Promise<number> {
    const { events, ids } = this.platform;
    const loaded = await loadStream(events, endpointStream(endpointId), endpointSnapshotAggregate);
    const endpoint = endpointOfTeam(loaded.state, teamId, endpointId);
    const { state: schedule } = await loadStream(events, maintenanceStream(teamId), maintenanceScheduleAggregate);
    const range = await ids.reserve('check', checks.length);
    const recorded: NewEvent<CheckRecordedData>[] = importedChecks(endpoint, schedule, checks, range.first).map((data) => ({
      type: CHECK_RECORDED,
      data,
      metadata: { occurred_at: data.checked_at },
    }));
    let written: StreamCommandResult<null, void> | undefined;
    for (let start = 0; start < recorded.length; start += IMPORT_CHUNK) {
      const chunk = recorded.slice(start, start + IMPORT_CHUNK);
      written = await runStreamCommand(events, checksStream(endpointId), appendOnly, context, () => ({ events: chunk, result: undefined }), {
        attempts: IMPORT_CHUNK_ATTEMPTS,
      });
    }
    this.platform.logger.info(
      { team_id: teamId, endpoint_id: endpointId, checks: recorded.length, first_check_id: range.first, request_id: context.requestId ?? undefined },
      'checks imported',
    );
    await this.platform.freshness.require({ append: written!.append, appended: recorded }, { extraMs: importExtraWaitMs(recorded.length) });
    return recorded.length;
  }
}

export const monitoringCommandHandlers = [
  CreateProjectHandler,
  UpdateProjectHandler,
  DeleteProjectHandler,
  RegisterEndpointHandler,
  UpdateEndpointHandler,
  DeleteEndpointHandler,
  ScheduleMaintenanceWindowHandler,
  CancelMaintenanceWindowHandler,
  ImportChecksHandler,
];
