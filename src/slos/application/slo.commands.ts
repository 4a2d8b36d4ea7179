import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { CommandContext } from '../../platform/es/command-context.js';
import { loadStream, runStreamCommand } from '../../platform/es/stream-command.js';
import type { NewEvent } from '../../platform/event-store/event-store.port.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import type { RuleViolation } from '../../platform/rules/rule-violation.js';
import { ENDPOINTS, MONITORING_VIEW, PROJECTS } from '../../monitoring/views/monitoring/view.js';
import { teamExists } from '../../tenancy/views/tenancy/queries.js';
import { SloCreatedConcurrentlyError, SloNotFoundError, SloRulesError } from '../domain/errors.js';
import { sloStream, type SloFields } from '../domain/events.js';
import { LIMITS, decide, live, sloAggregate, type SloCommand } from '../domain/slo.js';

/** A validated body: `endpoint_ids` or `project_id` (the edge refuses both or neither on create). */
export interface SloInput {
  name?: string;
  endpoint_ids?: number[];
  project_id?: number;
  objective_percent?: number;
  window_days?: number;
  latency_threshold_ms?: number | null;
}

export class CreateSlo extends Command<number> {
  constructor(readonly teamId: number, readonly input: SloInput, readonly context: CommandContext) {
    super();
  }
}

export class UpdateSlo extends Command<void> {
  constructor(readonly teamId: number, readonly sloId: number, readonly input: SloInput, readonly context: CommandContext) {
    super();
  }
}

export class DeleteSlo extends Command<void> {
  constructor(readonly teamId: number, readonly sloId: number, readonly context: CommandContext) {
    super();
  }
}

/** Every endpoint must be one of the team's, and the project too (another team's: 400 not_found, as a missing one). */
async function selectionErrors(platform: Platform, teamId: number, input: SloInput): Promise<RuleViolation[]> {
  const errors: RuleViolation[] = [];
  if (input.endpoint_ids) {
    const rows = await platform.reader.getMany(MONITORING_VIEW, ENDPOINTS, input.endpoint_ids);
    const ofTeam = new Set(rows.filter((row) => row.team_id === teamId).map((row) => Number(row.endpoint_id)));
    input.endpoint_ids.forEach((id, i) => {
      if (!ofTeam.has(id)) errors.push({ field: `endpoint_ids[${i}]`, code: 'not_found', message: 'does not name an endpoint of this team' });
    });
  }
  if (input.project_id !== undefined) {
    const row = await platform.reader.get(MONITORING_VIEW, PROJECTS, input.project_id);
    if (!row || row.team_id !== teamId) errors.push({ field: 'project_id', code: 'not_found', message: 'does not name a project of this team' });
  }
  return errors;
}

function refused(decision: { reason: 'not_found' | 'already_exists' | 'invalid'; violations?: RuleViolation[] }): never {
  if (decision.reason === 'not_found') throw new SloNotFoundError('The SLO');
  if (decision.reason === 'invalid') throw new SloRulesError(decision.violations ?? []);
  throw new SloCreatedConcurrentlyError();
}

async function runSloCommand(platform: Platform, sloId: number, command: SloCommand, context: CommandContext) {
  return runStreamCommand(platform.events, sloStream(sloId), sloAggregate, context, (state) => {
    const decision = decide(state, command);
    if (!decision.ok) refused(decision);
    return { events: decision.events as NewEvent[], result: undefined };
  });
}

function patchOf(input: SloInput): Partial<SloFields> {
  return {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.endpoint_ids !== undefined ? { endpoint_ids: input.endpoint_ids } : {}),
    ...(input.project_id !== undefined ? { project_id: input.project_id } : {}),
    ...(input.objective_percent !== undefined ? { objective_percent: input.objective_percent } : {}),
    ...(input.window_days !== undefined ? { window_days: input.window_days } : {}),
    ...(input.latency_threshold_ms !== undefined ? { latency_threshold_ms: input.latency_threshold_ms } : {}),
  };
}

/** Create: the team, then the selection's lookups, then the id, then the stream. */
@CommandHandler(CreateSlo)
export class CreateSloHandler implements ICommandHandler<CreateSlo> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, input, context }: CreateSlo): Promise<number> {
    if (!(await teamExists(this.platform.reader, teamId))) throw new SloNotFoundError('The team');
    const errors = await selectionErrors(this.platform, teamId, input);
    if (errors.length > 0) throw new SloRulesError(errors);
    const fields: SloFields = {
      name: input.name!,
      endpoint_ids: input.endpoint_ids ?? null,
      project_id: input.project_id ?? null,
      objective_percent: input.objective_percent!,
      window_days: input.window_days ?? LIMITS.window_days.default,
      latency_threshold_ms: input.latency_threshold_ms ?? null,
    };
    const sloId = await this.platform.ids.next('slo');
    await this.platform.freshness.require(await runSloCommand(this.platform, sloId, { kind: 'create', slo_id: sloId, team_id: teamId, fields, at: new Date().toISOString() }, context));
    return sloId;
  }
}

@CommandHandler(UpdateSlo)
export class UpdateSloHandler implements ICommandHandler<UpdateSlo> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, sloId, input, context }: UpdateSlo): Promise<void> {
    const { state } = await loadStream(this.platform.events, sloStream(sloId), sloAggregate);
    if (!live(state, teamId)) throw new SloNotFoundError('The SLO');
    const errors = await selectionErrors(this.platform, teamId, input);
    if (errors.length > 0) throw new SloRulesError(errors);
    await this.platform.freshness.require(await runSloCommand(this.platform, sloId, { kind: 'update', team_id: teamId, patch: patchOf(input), at: new Date().toISOString() }, context));
  }
}

@CommandHandler(DeleteSlo)
export class DeleteSloHandler implements ICommandHandler<DeleteSlo> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, sloId, context }: DeleteSlo): Promise<void> {
    await this.platform.freshness.require(await runSloCommand(this.platform, sloId, { kind: 'delete', team_id: teamId, at: new Date().toISOString() }, context));
  }
}

export const sloCommandHandlers = [CreateSloHandler, UpdateSloHandler, DeleteSloHandler];
