import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { CommandContext } from '../../platform/es/command-context.js';
import { metadataOf } from '../../platform/es/command-context.js';
import { loadStream, runStreamCommand } from '../../platform/es/stream-command.js';
import type { NewEvent, Position } from '../../platform/event-store/event-store.port.js';
import { Problems, type FieldError } from '../../platform/http/problem.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { CHECK_RECORDED, type CheckRecordedData, type CheckSource } from '../domain/check.js';
import {
  configurationChanges,
  configurationViolations,
  DEFAULT_CONFIGURATION,
  endpointAggregate,
  type EndpointState,
  newVerificationToken,
} from '../domain/endpoint.js';
import type { EndpointConfiguration } from '../domain/endpoint-configuration.js';
import {
  checksStream,
  ENDPOINT_DELETED,
  ENDPOINT_DISABLED,
  ENDPOINT_ENABLED,
  ENDPOINT_MAINTENANCE_UNTIL_SET,
  ENDPOINT_RECONFIGURED,
  ENDPOINT_REGISTERED,
  endpointStream,
  MAINTENANCE_WINDOW_CANCELLED,
  MAINTENANCE_WINDOW_SCHEDULED,
  maintenanceStream,
  PROJECT_CREATED,
  PROJECT_DELETED,
  PROJECT_UPDATED,
  projectStream,
  type EndpointDeletedData,
  type EndpointReconfiguredData,
  type ProjectDeletedData,
} from '../domain/events.js';
import { coverage } from '../domain/maintenance.js';
import { maintenanceScheduleAggregate } from '../domain/maintenance-schedule.js';
import { projectAggregate, projectChanges } from '../domain/project.js';

const VIEWS = ['monitoring'];
export const IMPORT_CHUNK = 500;

/** Every endpoint field a client may set (hidden values included). */
export type EndpointInput = Partial<EndpointConfiguration> & { name?: string; description?: string; project_id?: number };

export class CreateProject extends Command<number> {
  constructor(readonly teamId: number, readonly input: { name: string; description?: string }, readonly context: CommandContext) {
    super();
  }
}

export class UpdateProject extends Command<void> {
  constructor(readonly teamId: number, readonly projectId: number, readonly input: { name?: string; description?: string }, readonly context: CommandContext) {
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

export interface ImportedCheckInput {
  checked_at: string;
  success: boolean;
  status_code: number;
  latency_ms: number;
  time_to_first_byte_ms?: number;
  duration_ms?: number;
  source?: CheckSource;
  failure_reason?: string | null;
  body_complete?: boolean;
}

export class ImportChecks extends Command<number> {
  constructor(readonly teamId: number, readonly endpointId: number, readonly checks: ImportedCheckInput[], readonly context: CommandContext) {
    super();
  }
}

async function teamExists(platform: Platform, teamId: number): Promise<boolean> {
  return (await platform.reader.get('tenancy', 'teams', teamId)) !== null;
}

/** The project, when it exists in the team; null otherwise. */
async function projectOf(platform: Platform, teamId: number, projectId: number) {
  const { state } = await loadStream(platform.events, projectStream(projectId), projectAggregate);
  return state.exists && state.team_id === teamId ? state : null;
}

async function endpointOf(platform: Platform, teamId: number, endpointId: number): Promise<EndpointState | null> {
  const { state } = await loadStream(platform.events, endpointStream(endpointId), endpointAggregate);
  return state.exists && state.team_id === teamId ? state : null;
}

const unknownProject = (field = 'project_id'): FieldError => ({ field, code: 'not_found', message: 'does not name a project of this team' });

async function settle(platform: Platform, position: Position | undefined, views = VIEWS, timeoutMs?: number): Promise<void> {
  if (position !== undefined) await platform.freshness.require(position, views, timeoutMs);
}

/** An import's views take longer to apply the more checks it holds: 5 s plus 2 s per 1,000 checks. */
const importWaitMs = (checks: number) => 5_000 + 2 * checks;

@CommandHandler(CreateProject)
export class CreateProjectHandler implements ICommandHandler<CreateProject> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, input, context }: CreateProject): Promise<number> {
    if (!(await teamExists(this.platform, teamId))) throw Problems.notFound('The team');
    const projectId = await this.platform.ids.next('project');
    const data = { project_id: projectId, team_id: teamId, name: input.name, description: input.description ?? '', created_at: new Date().toISOString() };
    const { append } = await runStreamCommand(this.platform.events, projectStream(projectId), projectAggregate, context, () => ({
      events: [{ type: PROJECT_CREATED, data }],
      result: undefined,
    }));
    await settle(this.platform, append?.position);
    return projectId;
  }
}

@CommandHandler(UpdateProject)
export class UpdateProjectHandler implements ICommandHandler<UpdateProject> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, projectId, input, context }: UpdateProject): Promise<void> {
    const { append } = await runStreamCommand(this.platform.events, projectStream(projectId), projectAggregate, context, (state) => {
      if (!state.exists || state.team_id !== teamId) throw Problems.notFound('The project');
      const changes = projectChanges(state, input);
      if (Object.keys(changes).length === 0) return { events: [], result: undefined };
      return { events: [{ type: PROJECT_UPDATED, data: { project_id: projectId, team_id: teamId, changes, updated_at: new Date().toISOString() } }], result: undefined };
    });
    await settle(this.platform, append?.position);
  }
}

@CommandHandler(DeleteProject)
export class DeleteProjectHandler implements ICommandHandler<DeleteProject> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, projectId, context }: DeleteProject): Promise<void> {
    // Every write waits for the monitoring view before answering, so the view lists every
    // endpoint an earlier request registered or moved into this project.
    const remaining = await this.platform.reader.find('monitoring', 'endpoints', { filter: { team_id: teamId, project_id: projectId }, limit: 1 });
    const { append } = await runStreamCommand(this.platform.events, projectStream(projectId), projectAggregate, context, (state) => {
      if (!state.exists || state.team_id !== teamId) throw Problems.notFound('The project');
      if (remaining.length > 0) {
        throw Problems.conflict('project_not_empty', 'The project still has endpoints: delete them or move them to another project first.');
      }
      const data: ProjectDeletedData = { project_id: projectId, team_id: teamId, deleted_at: new Date().toISOString() };
      return { events: [{ type: PROJECT_DELETED, data }], result: undefined };
    });
    await settle(this.platform, append?.position, [...VIEWS, 'analytics_endpoints']);
  }
}

function splitInput(input: EndpointInput & Record<string, unknown>): { identity: { name?: string; description?: string; project_id?: number }; configuration: Partial<EndpointConfiguration> } {
  const { name, description, project_id, enabled: _enabled, maintenance_until: _until, ...configuration } = input;
  void _enabled;
  void _until;
  return { identity: { name, description, project_id }, configuration: configuration as Partial<EndpointConfiguration> };
}

/** Switching latency mode away from fixed clears a threshold the client did not restate. */
function mergeConfiguration(current: EndpointConfiguration, patch: Partial<EndpointConfiguration>): EndpointConfiguration {
  const merged = { ...current, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) } as EndpointConfiguration;
  if (patch.latency_detection_mode !== undefined && patch.latency_detection_mode !== 'fixed' && patch.latency_fixed_threshold_ms === undefined) {
    merged.latency_fixed_threshold_ms = null;
  }
  return merged;
}

@CommandHandler(RegisterEndpoint)
export class RegisterEndpointHandler implements ICommandHandler<RegisterEndpoint> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, input, context }: RegisterEndpoint): Promise<number> {
    if (!(await teamExists(this.platform, teamId))) throw Problems.notFound('The team');
    const { identity, configuration } = splitInput(input);
    const config = mergeConfiguration({ url: input.url, ...DEFAULT_CONFIGURATION }, configuration);
    const errors: FieldError[] = [...configurationViolations(config)];
    if (!(await projectOf(this.platform, teamId, input.project_id))) errors.push(unknownProject());
    if (errors.length > 0) throw Problems.validation(errors);
    const endpointId = await this.platform.ids.next('endpoint');
    const data = {
      endpoint_id: endpointId,
      team_id: teamId,
      project_id: input.project_id,
      name: input.name,
      description: identity.description ?? '',
      configuration: config,
      verification_token: newVerificationToken(),
      configuration_version: 1 as const,
      created_at: new Date().toISOString(),
    };
    const { append } = await runStreamCommand(this.platform.events, endpointStream(endpointId), endpointAggregate, context, () => ({
      events: [{ type: ENDPOINT_REGISTERED, data }],
      result: undefined,
    }));
    await settle(this.platform, append?.position);
    return endpointId;
  }
}

@CommandHandler(UpdateEndpoint)
export class UpdateEndpointHandler implements ICommandHandler<UpdateEndpoint> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, endpointId, input, context }: UpdateEndpoint): Promise<void> {
    if (!(await endpointOf(this.platform, teamId, endpointId))) throw Problems.notFound('The endpoint');
    const projectKnown = input.project_id === undefined || (await projectOf(this.platform, teamId, input.project_id)) !== null;
    const { append } = await runStreamCommand(this.platform.events, endpointStream(endpointId), endpointAggregate, context, (state) => {
      if (!state.exists || state.team_id !== teamId) throw Problems.notFound('The endpoint');
      const { identity, configuration } = splitInput(input);
      const config = mergeConfiguration(state.configuration, configuration);
      const errors: FieldError[] = [...configurationViolations(config)];
      if (!projectKnown) errors.push(unknownProject());
      if (errors.length > 0) throw Problems.validation(errors);
      if (input.enabled === true && !state.enabled && !state.verified) {
        throw Problems.conflict('destination_not_verified', 'Verify the destination (verify-destination) before enabling the endpoint.');
      }
      return { events: updateEvents(state, identity, config, input), result: undefined };
    });
    await settle(this.platform, append?.position);
  }
}

function updateEvents(
  state: EndpointState,
  identity: { name?: string; description?: string; project_id?: number },
  config: EndpointConfiguration,
  input: { enabled?: boolean; maintenance_until?: string | null },
): NewEvent[] {
  const at = new Date().toISOString();
  const base = { endpoint_id: state.endpoint_id, team_id: state.team_id };
  const events: NewEvent[] = [];
  const changes: EndpointReconfiguredData['changes'] = configurationChanges(state.configuration, config);
  if (identity.name !== undefined && identity.name !== state.name) changes.name = identity.name;
  if (identity.description !== undefined && identity.description !== state.description) changes.description = identity.description;
  if (identity.project_id !== undefined && identity.project_id !== state.project_id) changes.project_id = identity.project_id;
  if (Object.keys(changes).length > 0) {
    const data: EndpointReconfiguredData = { ...base, project_id: changes.project_id ?? state.project_id, changes, configuration_version: state.configuration_version + 1, updated_at: at };
    events.push({ type: ENDPOINT_RECONFIGURED, data });
  }
  if (input.enabled !== undefined && input.enabled !== state.enabled) {
    events.push({ type: input.enabled ? ENDPOINT_ENABLED : ENDPOINT_DISABLED, data: { ...base, at } });
  }
  if (input.maintenance_until !== undefined && input.maintenance_until !== state.maintenance_until) {
    events.push({ type: ENDPOINT_MAINTENANCE_UNTIL_SET, data: { ...base, maintenance_until: input.maintenance_until, at } });
  }
  return events;
}

@CommandHandler(DeleteEndpoint)
export class DeleteEndpointHandler implements ICommandHandler<DeleteEndpoint> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, endpointId, context }: DeleteEndpoint): Promise<void> {
    const { append } = await runStreamCommand(this.platform.events, endpointStream(endpointId), endpointAggregate, context, (state) => {
      if (!state.exists || state.team_id !== teamId) throw Problems.notFound('The endpoint');
      const data: EndpointDeletedData = { endpoint_id: endpointId, team_id: teamId, project_id: state.project_id, deleted_at: new Date().toISOString() };
      return { events: [{ type: ENDPOINT_DELETED, data }], result: undefined };
    });
    // Answer once lists, the schedule and analytics no longer show it.
    await settle(this.platform, append?.position, [...VIEWS, 'probing', 'analytics_endpoints']);
  }
}

@CommandHandler(ScheduleMaintenanceWindow)
export class ScheduleMaintenanceWindowHandler implements ICommandHandler<ScheduleMaintenanceWindow> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, input, context }: ScheduleMaintenanceWindow): Promise<number> {
    if (!(await teamExists(this.platform, teamId))) throw Problems.notFound('The team');
    const errors: FieldError[] = [];
    if (input.project_id !== null && !(await projectOf(this.platform, teamId, input.project_id))) errors.push(unknownProject());
    if (input.endpoint_id !== null) {
      const endpoint = await endpointOf(this.platform, teamId, input.endpoint_id);
      if (!endpoint) errors.push({ field: 'endpoint_id', code: 'not_found', message: 'does not name an endpoint of this team' });
      else if (input.project_id !== null && endpoint.project_id !== input.project_id) {
        errors.push({ field: 'endpoint_id', code: 'invalid_value', message: 'does not belong to project_id' });
      }
    }
    if (Date.parse(input.ends_at) <= Date.parse(input.starts_at)) errors.push({ field: 'ends_at', code: 'out_of_range', message: 'must be after starts_at' });
    if (errors.length > 0) throw Problems.validation(errors);
    const windowId = await this.platform.ids.next('maintenance_window');
    const data = { window_id: windowId, team_id: teamId, ...input, created_at: new Date().toISOString() };
    const { append } = await runStreamCommand(this.platform.events, maintenanceStream(teamId), maintenanceScheduleAggregate, context, () => ({
      events: [{ type: MAINTENANCE_WINDOW_SCHEDULED, data }],
      result: undefined,
    }));
    await settle(this.platform, append?.position);
    return windowId;
  }
}

@CommandHandler(CancelMaintenanceWindow)
export class CancelMaintenanceWindowHandler implements ICommandHandler<CancelMaintenanceWindow> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, windowId, context }: CancelMaintenanceWindow): Promise<void> {
    const { append } = await runStreamCommand(this.platform.events, maintenanceStream(teamId), maintenanceScheduleAggregate, context, (state) => {
      const window = state.windows.get(windowId);
      if (!window || window.cancelled_at) throw Problems.notFound('The maintenance window');
      return { events: [{ type: MAINTENANCE_WINDOW_CANCELLED, data: { window_id: windowId, team_id: teamId, cancelled_at: new Date().toISOString() } }], result: undefined };
    });
    await settle(this.platform, append?.position);
  }
}

@CommandHandler(ImportChecks)
export class ImportChecksHandler implements ICommandHandler<ImportChecks> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, endpointId, checks, context }: ImportChecks): Promise<number> {
    const { events, ids } = this.platform;
    const endpoint = await endpointOf(this.platform, teamId, endpointId);
    if (!endpoint) throw Problems.notFound('The endpoint');
    const { state: schedule } = await loadStream(events, maintenanceStream(teamId), maintenanceScheduleAggregate);
    const windows = [...schedule.windows.values()];
    const range = await ids.reserve('check', checks.length);
    const recorded: NewEvent<CheckRecordedData>[] = checks.map((check, index) => {
      const checked_at = new Date(check.checked_at).toISOString();
      const data: CheckRecordedData = {
        check_id: range.first + index,
        team_id: teamId,
        project_id: endpoint.project_id,
        endpoint_id: endpointId,
        configuration_version: endpoint.configuration_version,
        source: check.source ?? 'scheduled',
        job_id: null,
        success: check.success,
        status_code: check.status_code,
        latency_ms: check.latency_ms,
        time_to_first_byte_ms: check.time_to_first_byte_ms ?? check.latency_ms,
        duration_ms: check.duration_ms ?? check.latency_ms,
        body_complete: check.body_complete ?? true,
        failure_reason: check.failure_reason ?? null,
        response_excerpt: null,
        checked_at,
        alert_suppressed: coverage(checked_at, endpoint, windows).under_maintenance,
        latency_anomaly: false,
        latency_threshold_ms: null,
        imported: true,
      };
      return { type: CHECK_RECORDED, data, metadata: metadataOf(context, checked_at) };
    });
    let position: Position | undefined;
    for (let start = 0; start < recorded.length; start += IMPORT_CHUNK) {
      const append = await events.append(checksStream(endpointId), recorded.slice(start, start + IMPORT_CHUNK), { expectedRevision: 'any' });
      position = append.position;
    }
    this.platform.logger.info(
      { team_id: teamId, endpoint_id: endpointId, checks: recorded.length, first_check_id: range.first, request_id: context.requestId ?? undefined },
      'checks imported',
    );
    await settle(this.platform, position, ['checks'], importWaitMs(recorded.length));
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
