import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { CommandContext } from '../../platform/es/command-context.js';
import { Problems } from '../../platform/http/problem.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { toCheckpoint, toComment } from '../domain/detail-view.js';
import type { Checkpoint, Comment } from '../domain/events.js';
import {
  validateCheckpointCreate,
  validateCheckpointUpdate,
  validateCommentCreate,
  validateCommentUpdate,
} from '../domain/validation.js';
import { failIfInvalid, runIncidentCommand, writableIncident } from './incident.commands.js';

/** Comments and checkpoints of an incident: ids come from the team-wide sequences. */
type Body = Record<string, unknown>;
type Op = 'add' | 'update' | 'delete';

export class WriteComment extends Command<Comment | null> {
  constructor(
    readonly op: Op,
    readonly teamId: number,
    readonly incidentId: number,
    readonly commentId: number | null,
    readonly body: unknown,
    readonly context: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(WriteComment)
export class WriteCommentHandler implements ICommandHandler<WriteComment> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ op, teamId, incidentId, commentId, body, context }: WriteComment): Promise<Comment | null> {
    const incident = await writableIncident(this.platform, teamId, incidentId);
    if (op !== 'add' && !incident.comments.has(commentId!)) throw Problems.notFound('The comment');
    const input = body as Body;
    if (op === 'delete') {
      await runIncidentCommand(this.platform, incidentId, context, { kind: 'delete_comment', comment_id: commentId! }, incident);
      return null;
    }
    if (op === 'update') {
      failIfInvalid(validateCommentUpdate(body));
      const state = await runIncidentCommand(this.platform, incidentId, context, {
        kind: 'update_comment',
        comment_id: commentId!,
        body: input.body as string | undefined,
        pinned: input.pinned as boolean | undefined,
      }, incident);
      return toComment(state.comments.get(commentId!)!);
    }
    failIfInvalid(validateCommentCreate(body));
    const id = await this.platform.ids.next('comment');
    const state = await runIncidentCommand(this.platform, incidentId, context, {
      kind: 'add_comment',
      comment_id: id,
      body: input.body as string,
      pinned: input.pinned as boolean | undefined,
    }, incident);
    return toComment(state.comments.get(id)!);
  }
}

export class WriteCheckpoint extends Command<Checkpoint> {
  constructor(
    readonly op: 'add' | 'update',
    readonly teamId: number,
    readonly incidentId: number,
    readonly checkpointId: number | null,
    readonly body: unknown,
    readonly context: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(WriteCheckpoint)
export class WriteCheckpointHandler implements ICommandHandler<WriteCheckpoint> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ op, teamId, incidentId, checkpointId, body, context }: WriteCheckpoint): Promise<Checkpoint> {
    const incident = await writableIncident(this.platform, teamId, incidentId);
    const input = body as Body;
    const fields = { title: input?.title as string | undefined, body: input?.body as string | undefined, status_label: input?.status_label as string | undefined };
    if (op === 'update') {
      if (!incident.checkpoints.has(checkpointId!)) throw Problems.notFound('The checkpoint');
      failIfInvalid(validateCheckpointUpdate(body));
      const state = await runIncidentCommand(this.platform, incidentId, context, { kind: 'update_checkpoint', checkpoint_id: checkpointId!, ...fields }, incident);
      return toCheckpoint(state.checkpoints.get(checkpointId!)!);
    }
    failIfInvalid(validateCheckpointCreate(body));
    const id = await this.platform.ids.next('checkpoint');
    const state = await runIncidentCommand(this.platform, incidentId, context, { kind: 'add_checkpoint', checkpoint_id: id, ...fields, title: fields.title! }, incident);
    return toCheckpoint(state.checkpoints.get(id)!);
  }
}
