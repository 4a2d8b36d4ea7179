import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { CommandContext } from '../../platform/es/command-context.js';
import { loadStream, runStreamCommand } from '../../platform/es/stream-command.js';
import type { NewEvent } from '../../platform/event-store/event-store.port.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { SlugTakenError, StatusPageCreatedConcurrentlyError, StatusPageRulesError, StatusPagesNotFoundError, type RuleViolation } from '../domain/errors.js';
import { slugStream, statusPageStream, type StatusPageFields } from '../domain/events.js';
import { decideClaim, decideRelease, slugAggregate, type ClaimHolder } from '../domain/slug.js';
import { DEFAULT_HISTORY_DAYS, decide, statusPageAggregate, type StatusPageCommand, type StatusPageState } from '../domain/status-page.js';
import { ENDPOINTS, MONITORING_VIEW } from '../../monitoring/views/monitoring/view.js';
import { teamExists } from '../../tenancy/views/tenancy/queries.js';

export interface StatusPageInput {
  slug: string;
  title: string;
  description?: string;
  components: Array<{ endpoint_id: number; name?: string | null }>;
  history_days?: number;
  publish_automatic_incidents?: boolean;
}

export class CreateStatusPage extends Command<number> {
  constructor(readonly teamId: number, readonly input: StatusPageInput, readonly context: CommandContext) {
    super();
  }
}

export class UpdateStatusPage extends Command<void> {
  constructor(readonly teamId: number, readonly pageId: number, readonly input: Partial<StatusPageInput>, readonly context: CommandContext) {
    super();
  }
}

export class DeleteStatusPage extends Command<void> {
  constructor(readonly teamId: number, readonly pageId: number, readonly context: CommandContext) {
    super();
  }
}

function refused(reason: 'not_found' | 'already_exists'): never {
  if (reason === 'not_found') throw new StatusPagesNotFoundError('The status page');
  throw new StatusPageCreatedConcurrentlyError();
}

/** Components as stored: the display name is null when the endpoint's own name is meant. */
function components(input: StatusPageInput['components']): StatusPageFields['components'] {
  return input.map((c) => ({ endpoint_id: c.endpoint_id, name: c.name ?? null }));
}

/** Every component must name an endpoint of the page's team (any other is a 400, as for a missing one). */
async function componentErrors(platform: Platform, teamId: number, list: StatusPageInput['components'] | undefined): Promise<RuleViolation[]> {
  if (!list) return [];
  const rows = await platform.reader.getMany(MONITORING_VIEW, ENDPOINTS, list.map((c) => c.endpoint_id));
  const ofTeam = new Set(rows.filter((row) => row.team_id === teamId).map((row) => Number(row.endpoint_id)));
  return list.flatMap((c, i) =>
    ofTeam.has(c.endpoint_id) ? [] : [{ field: `components[${i}].endpoint_id`, code: 'not_found', message: 'does not name an endpoint of this team' }],
  );
}

async function pageState(platform: Platform, pageId: number): Promise<StatusPageState> {
  return (await loadStream(platform.events, statusPageStream(pageId), statusPageAggregate)).state;
}

async function holderOf(platform: Platform, pageId: number): Promise<ClaimHolder> {
  const state = await pageState(platform, pageId);
  return { slug: state.exists ? state.slug : null, deleted: state.deleted };
}

async function claimSlug(platform: Platform, slug: string, pageId: number, context: CommandContext): Promise<void> {
  await runStreamCommand(platform.events, slugStream(slug), slugAggregate, context, async (state) => {
    const holder = state.page_id !== null && state.page_id !== pageId ? await holderOf(platform, state.page_id) : null;
    const decision = decideClaim(slug, state, pageId, holder, Date.now());
    if (!decision.ok) throw new SlugTakenError(slug);
    return { events: decision.events, result: undefined };
  });
}

async function releaseSlug(platform: Platform, slug: string, pageId: number, context: CommandContext): Promise<void> {
  await runStreamCommand(platform.events, slugStream(slug), slugAggregate, context, (state) => ({ events: decideRelease(slug, state, pageId, Date.now()), result: undefined }));
}

async function runPageCommand(platform: Platform, pageId: number, command: StatusPageCommand, context: CommandContext) {
  return runStreamCommand(platform.events, statusPageStream(pageId), statusPageAggregate, context, (state) => {
    const decision = decide(state, command);
    if (!decision.ok) refused(decision.reason);
    return { events: decision.events as NewEvent[], result: state };
  });
}

/**
 * Create: check the components, allocate the id, claim the slug, then write the page. A crash
 * after the claim leaves a claim whose page does not exist; it is taken over a minute later.
 */
@CommandHandler(CreateStatusPage)
export class CreateStatusPageHandler implements ICommandHandler<CreateStatusPage> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, input, context }: CreateStatusPage): Promise<number> {
    if (!(await teamExists(this.platform.reader, teamId))) throw new StatusPagesNotFoundError('The team');
    const errors = await componentErrors(this.platform, teamId, input.components);
    if (errors.length > 0) throw new StatusPageRulesError(errors);
    const pageId = await this.platform.ids.next('status_page');
    await claimSlug(this.platform, input.slug, pageId, context);
    const fields: StatusPageFields = {
      slug: input.slug,
      title: input.title,
      description: input.description ?? '',
      components: components(input.components),
      history_days: input.history_days ?? DEFAULT_HISTORY_DAYS,
      publish_automatic_incidents: input.publish_automatic_incidents ?? false,
    };
    await this.platform.freshness.require(await runPageCommand(this.platform, pageId, { kind: 'create', page_id: pageId, team_id: teamId, fields, at: new Date().toISOString() }, context));
    return pageId;
  }
}

/** Update: a new slug is claimed before the page takes it, and the old one released after. */
@CommandHandler(UpdateStatusPage)
export class UpdateStatusPageHandler implements ICommandHandler<UpdateStatusPage> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, pageId, input, context }: UpdateStatusPage): Promise<void> {
    const before = await pageState(this.platform, pageId);
    if (!before.exists || before.deleted || before.team_id !== teamId) throw new StatusPagesNotFoundError('The status page');
    const errors = await componentErrors(this.platform, teamId, input.components);
    if (errors.length > 0) throw new StatusPageRulesError(errors);
    const patch: Partial<StatusPageFields> = {
      ...(input.slug !== undefined ? { slug: input.slug } : {}),
      ...(input.title !== undefined ? { title: input.title } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.history_days !== undefined ? { history_days: input.history_days } : {}),
      ...(input.publish_automatic_incidents !== undefined ? { publish_automatic_incidents: input.publish_automatic_incidents } : {}),
      ...(input.components !== undefined ? { components: components(input.components) } : {}),
    };
    const newSlug = patch.slug !== undefined && patch.slug !== before.slug ? patch.slug : null;
    if (newSlug) await claimSlug(this.platform, newSlug, pageId, context);
    let result;
    try {
      result = await runPageCommand(this.platform, pageId, { kind: 'update', team_id: teamId, patch, at: new Date().toISOString() }, context);
    } catch (error) {
      if (newSlug) await releaseSlug(this.platform, newSlug, pageId, context);
      throw error;
    }
    const previousSlug = result.state.slug;
    if (newSlug && previousSlug !== newSlug) await releaseSlug(this.platform, previousSlug, pageId, context);
    await this.platform.freshness.require(result);
  }
}

/** Delete: the page first (it stops being served), then its slug becomes free. */
@CommandHandler(DeleteStatusPage)
export class DeleteStatusPageHandler implements ICommandHandler<DeleteStatusPage> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, pageId, context }: DeleteStatusPage): Promise<void> {
    const written = await runPageCommand(this.platform, pageId, { kind: 'delete', team_id: teamId, at: new Date().toISOString() }, context);
    await releaseSlug(this.platform, written.state.slug, pageId, context);
    await this.platform.freshness.require(written);
  }
}

export const statusPageCommandHandlers = [CreateStatusPageHandler, UpdateStatusPageHandler, DeleteStatusPageHandler];
