import type { RecordedEvent } from '../../../src/platform/event-store/event-store.port.js';
import { DEFAULT_CONFIGURATION, decideEndpoint, type EndpointCommand, type EndpointRegistration } from '../../../src/monitoring/domain/endpoint.js';
import { endpointSnapshotAggregate } from '../../../src/monitoring/domain/endpoint-snapshot.js';
import {
  AlreadyExistsError,
  DestinationNotVerifiedError,
  EndpointNotFoundError,
  MaintenanceWindowNotFoundError,
  MonitoringRulesError,
  ProjectNotEmptyError,
  ProjectNotFoundError,
  TeamNotFoundError,
} from '../../../src/monitoring/domain/errors.js';
import type { EndpointEvent, MaintenanceEvent, ProjectEvent } from '../../../src/monitoring/domain/events.js';
import { decideMaintenance, maintenanceScheduleAggregate, type MaintenanceCommand, type WindowRequest } from '../../../src/monitoring/domain/maintenance-schedule.js';
import { decideProject, projectAggregate, type ProjectCommand } from '../../../src/monitoring/domain/project.js';

const T0 = '2026-11-25T10:00:00.000Z';
const T1 = '2026-11-25T11:00:00.000Z';

/** Given these events of a stream, when the command is decided: the events it decides (or the refusal). */
function given<S, E extends { type: string; data: unknown }, C>(aggregate: { initial(): S; evolve(state: S, event: RecordedEvent): S }, decide: (state: S, command: C) => E[]) {
  return (...history: E[]) => ({
    when: (command: C) => decide(history.map((event, revision) => ({ ...event, revision }) as unknown as RecordedEvent).reduce(aggregate.evolve, aggregate.initial()), command),
  });
}

/** The first refusal's class and, for rule errors, its violations. */
function refusal(run: () => unknown): { error: Error; violations?: unknown } {
  try {
    run();
  } catch (error) {
    return { error: error as Error, violations: error instanceof MonitoringRulesError ? error.violations : undefined };
  }
  throw new Error('expected a refusal');
}

describe('project decider', () => {
  const project = given(projectAggregate, decideProject);
  const created: ProjectEvent = { type: 'ProjectCreated', data: { project_id: 3, team_id: 1, name: 'Web', description: '', created_at: T0 } };
  const create: ProjectCommand = { kind: 'create_project', team_exists: true, project_id: 3, team_id: 1, name: 'Web', description: '', created_at: T0 };

  it('creates a project in a team that exists, and refuses an unknown team or an id used before', () => {
    expect(project().when(create)).toEqual([created]);
    expect(refusal(() => project().when({ ...create, team_exists: false })).error).toBeInstanceOf(TeamNotFoundError);
    expect(refusal(() => project(created).when(create)).error).toBeInstanceOf(AlreadyExistsError);
  });

  it('records only the fields that change, and nothing when none does', () => {
    const update = { kind: 'update_project', project_id: 3, team_id: 1, updated_at: T1 } as const;
    expect(project(created).when({ ...update, name: 'Store', description: '' })).toEqual([
      { type: 'ProjectUpdated', data: { project_id: 3, team_id: 1, changes: { name: 'Store' }, updated_at: T1 } },
    ]);
    expect(project(created).when({ ...update, name: 'Web' })).toEqual([]);
  });

  it('keeps incident_grouping_seconds: written on create when set, changed on update, 0 for a project without it', () => {
    expect(project().when({ ...create, incident_grouping_seconds: 60 })).toEqual([{ ...created, data: { ...created.data, incident_grouping_seconds: 60 } }]);
    const update = { kind: 'update_project', project_id: 3, team_id: 1, updated_at: T1 } as const;
    expect(project(created).when({ ...update, incident_grouping_seconds: 0 })).toEqual([]);
    const changed = project(created).when({ ...update, incident_grouping_seconds: 120 });
    expect(changed).toEqual([{ type: 'ProjectUpdated', data: { project_id: 3, team_id: 1, changes: { incident_grouping_seconds: 120 }, updated_at: T1 } }]);
    expect(project(created, ...changed).when({ ...update, incident_grouping_seconds: 120 })).toEqual([]);
  });

  it('answers another team’s or a deleted project as not found', () => {
    const deleted: ProjectEvent = { type: 'ProjectDeleted', data: { project_id: 3, team_id: 1, deleted_at: T1 } };
    expect(refusal(() => project(created).when({ kind: 'update_project', project_id: 3, team_id: 2, name: 'x', updated_at: T1 })).error).toBeInstanceOf(ProjectNotFoundError);
    expect(refusal(() => project(created, deleted).when({ kind: 'update_project', project_id: 3, team_id: 1, name: 'x', updated_at: T1 })).error).toBeInstanceOf(ProjectNotFoundError);
    expect(refusal(() => project().when({ kind: 'delete_project', project_id: 3, team_id: 1, has_endpoints: false, deleted_at: T1 })).error).toBeInstanceOf(ProjectNotFoundError);
  });

  it('deletes an empty project only; not found comes before not empty', () => {
    const remove = { kind: 'delete_project', project_id: 3, team_id: 1, deleted_at: T1 } as const;
    expect(project(created).when({ ...remove, has_endpoints: false })).toEqual([{ type: 'ProjectDeleted', data: { project_id: 3, team_id: 1, deleted_at: T1 } }]);
    expect(refusal(() => project(created).when({ ...remove, has_endpoints: true })).error).toBeInstanceOf(ProjectNotEmptyError);
    expect(refusal(() => project(created).when({ ...remove, team_id: 2, has_endpoints: true })).error).toBeInstanceOf(ProjectNotFoundError);
  });
});

describe('endpoint decider', () => {
  const endpoint = given(endpointSnapshotAggregate, decideEndpoint);
  const registration: EndpointRegistration = {
    team_id: 1,
    project_id: 3,
    name: 'API',
    description: '',
    configuration: { url: 'https://example.com/health', interval_seconds: 30 },
    team_exists: true,
    project_known: true,
  };
  const register: EndpointCommand = { kind: 'register_endpoint', ...registration, endpoint_id: 7, verification_token: 'token', created_at: T0 };
  const registered: EndpointEvent = {
    type: 'EndpointRegistered',
    data: {
      endpoint_id: 7,
      team_id: 1,
      project_id: 3,
      name: 'API',
      description: '',
      configuration: { ...DEFAULT_CONFIGURATION, url: 'https://example.com/health', interval_seconds: 30 },
      verification_token: 'token',
      configuration_version: 1,
      created_at: T0,
    },
  };
  const verified: EndpointEvent = { type: 'DestinationVerified', data: { endpoint_id: 7, team_id: 1, verified_at: T0 } };
  const update = (changes: Extract<EndpointCommand, { kind: 'update_endpoint' }>['changes'], project_known = true): EndpointCommand => ({
    kind: 'update_endpoint',
    endpoint_id: 7,
    team_id: 1,
    changes,
    project_known,
    at: T1,
  });

  it('registers with the defaults for every field not given', () => {
    expect(endpoint().when(register)).toEqual([registered]);
  });

  it('refuses a registration: the team first, then every broken rule at once, rules before the project', () => {
    expect(refusal(() => endpoint().when({ ...register, team_exists: false, project_known: false })).error).toBeInstanceOf(TeamNotFoundError);
    const refused = refusal(() => endpoint().when({ ...register, configuration: { url: register.configuration.url, interval_seconds: 5, timeout_seconds: 6, latency_detection_mode: 'fixed' }, project_known: false }));
    expect(refused.error).toBeInstanceOf(MonitoringRulesError);
    expect(refused.violations).toEqual([
      { field: 'timeout_seconds', code: 'out_of_range', message: 'must not exceed interval_seconds' },
      { field: 'latency_fixed_threshold_ms', code: 'required', message: 'is required when latency_detection_mode is fixed' },
      { field: 'project_id', code: 'not_found', message: 'does not name a project of this team' },
    ]);
  });

  it('never registers over a live endpoint (ids are handed out once)', () => {
    expect(refusal(() => endpoint(registered).when(register)).error).toBeInstanceOf(AlreadyExistsError);
  });

  it('bumps the configuration version once for every change of an update, and records toggles apart', () => {
    expect(endpoint(registered, verified).when(update({ name: 'Renamed', configuration: { timeout_seconds: 5 }, enabled: true, maintenance_until: T1 }))).toEqual([
      { type: 'EndpointReconfigured', data: { endpoint_id: 7, team_id: 1, project_id: 3, changes: { timeout_seconds: 5, name: 'Renamed' }, configuration_version: 2, updated_at: T1 } },
      { type: 'EndpointEnabled', data: { endpoint_id: 7, team_id: 1, at: T1 } },
      { type: 'EndpointMaintenanceUntilSet', data: { endpoint_id: 7, team_id: 1, maintenance_until: T1, at: T1 } },
    ]);
  });

  it('decides nothing for values the endpoint already has', () => {
    expect(endpoint(registered).when(update({ name: 'API', configuration: { interval_seconds: 30 }, enabled: false, maintenance_until: null }))).toEqual([]);
  });

  it('records a move to another project with the new project on the event', () => {
    expect(endpoint(registered).when(update({ project_id: 4, configuration: {} }))).toEqual([
      { type: 'EndpointReconfigured', data: { endpoint_id: 7, team_id: 1, project_id: 4, changes: { project_id: 4 }, configuration_version: 2, updated_at: T1 } },
    ]);
  });

  it('clears a fixed threshold the client did not restate when the latency mode leaves fixed', () => {
    const fixed = endpoint(registered).when(update({ configuration: { latency_detection_mode: 'fixed', latency_fixed_threshold_ms: 800 } }));
    const [event] = endpoint(registered, ...fixed).when(update({ configuration: { latency_detection_mode: 'auto' } }));
    expect(event).toMatchObject({ type: 'EndpointReconfigured', data: { changes: { latency_detection_mode: 'auto', latency_fixed_threshold_ms: null }, configuration_version: 3 } });
  });

  it('checks an update in order: not found, then the rules, then enabling an unverified endpoint', () => {
    const broken = update({ configuration: { timeout_seconds: 90 }, enabled: true }, false);
    expect(refusal(() => endpoint().when(broken)).error).toBeInstanceOf(EndpointNotFoundError);
    expect(refusal(() => endpoint(registered).when({ ...broken, team_id: 2 })).error).toBeInstanceOf(EndpointNotFoundError);
    const rules = refusal(() => endpoint(registered).when(broken));
    expect(rules.error).toBeInstanceOf(MonitoringRulesError);
    expect(rules.violations).toEqual([
      { field: 'timeout_seconds', code: 'out_of_range', message: 'must not exceed interval_seconds' },
      { field: 'project_id', code: 'not_found', message: 'does not name a project of this team' },
    ]);
    expect(refusal(() => endpoint(registered).when(update({ configuration: {}, enabled: true }))).error).toBeInstanceOf(DestinationNotVerifiedError);
  });

  it('verifies a destination once', () => {
    const verify: EndpointCommand = { kind: 'verify_destination', endpoint_id: 7, team_id: 1, verified_at: T0 };
    expect(endpoint(registered).when(verify)).toEqual([verified]);
    expect(endpoint(registered, verified).when(verify)).toEqual([]);
    expect(refusal(() => endpoint().when(verify)).error).toBeInstanceOf(EndpointNotFoundError);
  });

  it('deletes an endpoint with the project it was in; a deleted endpoint is not found', () => {
    const remove: EndpointCommand = { kind: 'delete_endpoint', endpoint_id: 7, team_id: 1, deleted_at: T1 };
    const moved: EndpointEvent = { type: 'EndpointReconfigured', data: { endpoint_id: 7, team_id: 1, project_id: 4, changes: { project_id: 4 }, configuration_version: 2, updated_at: T0 } };
    const [deleted] = endpoint(registered, moved).when(remove);
    expect(deleted).toEqual({ type: 'EndpointDeleted', data: { endpoint_id: 7, team_id: 1, project_id: 4, deleted_at: T1 } });
    expect(refusal(() => endpoint(registered, deleted).when(remove)).error).toBeInstanceOf(EndpointNotFoundError);
    expect(refusal(() => endpoint(registered, deleted).when(update({ name: 'x', configuration: {} }))).error).toBeInstanceOf(EndpointNotFoundError);
  });
});

describe('maintenance decider', () => {
  const schedule = given(maintenanceScheduleAggregate, decideMaintenance);
  const request: WindowRequest = {
    team_id: 1,
    project_id: 3,
    endpoint_id: 7,
    starts_at: T0,
    ends_at: T1,
    reason: 'Upgrade',
    team_exists: true,
    project_known: true,
    endpoint: { project_id: 3 },
  };
  const scheduleWindow: MaintenanceCommand = { kind: 'schedule_window', ...request, window_id: 9, created_at: T0 };
  const scheduled: MaintenanceEvent = {
    type: 'MaintenanceWindowScheduled',
    data: { window_id: 9, team_id: 1, project_id: 3, endpoint_id: 7, starts_at: T0, ends_at: T1, reason: 'Upgrade', created_at: T0 },
  };
  const cancel: MaintenanceCommand = { kind: 'cancel_window', team_id: 1, window_id: 9, cancelled_at: T1 };

  it('schedules a window, and refuses to reuse its id', () => {
    expect(schedule().when(scheduleWindow)).toEqual([scheduled]);
    expect(refusal(() => schedule(scheduled).when(scheduleWindow)).error).toBeInstanceOf(AlreadyExistsError);
  });

  it('refuses a window: the team first, then project, endpoint and times in that order', () => {
    expect(refusal(() => schedule().when({ ...scheduleWindow, team_exists: false, ends_at: T0 })).error).toBeInstanceOf(TeamNotFoundError);
    const refused = refusal(() => schedule().when({ ...scheduleWindow, project_known: false, endpoint: null, ends_at: T0 }));
    expect(refused.violations).toEqual([
      { field: 'project_id', code: 'not_found', message: 'does not name a project of this team' },
      { field: 'endpoint_id', code: 'not_found', message: 'does not name an endpoint of this team' },
      { field: 'ends_at', code: 'out_of_range', message: 'must be after starts_at' },
    ]);
    expect(refusal(() => schedule().when({ ...scheduleWindow, endpoint: { project_id: 4 } })).violations).toEqual([
      { field: 'endpoint_id', code: 'invalid_value', message: 'does not belong to project_id' },
    ]);
  });

  it('takes a team-wide window without a project or an endpoint to check', () => {
    const teamWide = { ...scheduleWindow, project_id: null, endpoint_id: null, project_known: false, endpoint: null };
    expect(schedule().when(teamWide)).toEqual([{ type: 'MaintenanceWindowScheduled', data: { ...scheduled.data, project_id: null, endpoint_id: null } }]);
  });

  it('cancels a window once; an unknown or cancelled window is not found', () => {
    const [cancelled] = schedule(scheduled).when(cancel);
    expect(cancelled).toEqual({ type: 'MaintenanceWindowCancelled', data: { window_id: 9, team_id: 1, cancelled_at: T1 } });
    expect(refusal(() => schedule(scheduled, cancelled).when(cancel)).error).toBeInstanceOf(MaintenanceWindowNotFoundError);
    expect(refusal(() => schedule().when(cancel)).error).toBeInstanceOf(MaintenanceWindowNotFoundError);
  });
});
