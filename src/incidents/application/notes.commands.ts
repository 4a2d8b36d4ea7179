import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { CommandContext } from '../../platform/es/command-context.js';
import type { CheckedBody } from '../../platform/http/validation.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { toCheckpoint, toComment } from '../domain/detail-view.js';
import { UnknownIdError } from '../domain/errors.js';
import type { Checkpoint, Comment } from '../domain/events.js';
import { failIfInvalid, runIncidentCommand, writableIncident } from './incident.commands.js';

/**
 * Comments and checkpoints of an incident. Bodies arrive checked at the HTTP edge (their errors
 * with them), so the decided order holds: the incident (404), merged (409), the comment or
 * checkpoint (404), then the body (400). Ids come from team-wide sequences, so items moved by a
 * merge keep theirs.
 */
export class AddComment extends Command<Comment> {
  constructor(readonly teamId: number, readonly incidentId: number, readonly body: CheckedBody<{ body: string; pinned?: boolean }>, readonly context: CommandContext) {
    super();
  }
}

export class EditComment extends Command<Comment> {
  constructor(
    readonly teamId: number,
    readonly incidentId: number,
    readonly commentId: number,
    readonly body: CheckedBody<{ body?: string; pinned?: boolean }>,
    readonly context: CommandContext,
  ) {
    super();
  }
}

export class DeleteComment extends Command<void> {
  constructor(readonly teamId: number, readonly incidentId: number, readonly commentId: number, readonly context: CommandContext) {
    super();
  }
}

export class AddCheckpoint extends Command<Checkpoint> {
  constructor(
    readonly teamId: number,
    readonly incidentId: number,
    readonly body: CheckedBody<{ title: string; body?: string; status_label?: string }>,
    readonly context: CommandContext,
  ) {
    super();
  }
}

export class EditCheckpoint extends Command<Checkpoint> {
  constructor(
    readonly teamId: number,
    readonly incidentId: number,
    readonly checkpointId: number,
    readonly body: CheckedBody<{ title?: string; body?: string; status_label?: string }>,
    readonly context: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(AddComment)
export class AddCommentHandler implements ICommandHandler<AddComment> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, incidentId, body, context }: AddComment): Promise<Comment> {
    const incident = await writableIncident(this.platform, teamId, incidentId);
    failIfInvalid(body.errors);
    const id = await this.platform.ids.next('comment');
    const state = await runIncidentCommand(this.platform, incidentId, context, { kind: 'add_comment', comment_id: id, body: body.value.body, pinned: body.value.pinned }, incident);
    return toComment(state.comments.get(id)!);
  }
}

@CommandHandler(EditComment)
export class EditCommentHandler implements ICommandHandler<EditComment> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, incidentId, commentId, body, context }: EditComment): Promise<Comment> {
    const incident = await writableIncident(this.platform, teamId, incidentId);
    if (!incident.comments.has(commentId)) throw new UnknownIdError('comment');
    failIfInvalid(body.errors);
    const state = await runIncidentCommand(this.platform, incidentId, context, { kind: 'update_comment', comment_id: commentId, body: body.value.body, pinned: body.value.pinned }, incident);
    return toComment(state.comments.get(commentId)!);
  }
}

@CommandHandler(DeleteComment)
export class DeleteCommentHandler implements ICommandHandler<DeleteComment> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, incidentId, commentId, context }: DeleteComment): Promise<void> {
    const incident = await writableIncident(this.platform, teamId, incidentId);
    if (!incident.comments.has(commentId)) throw new UnknownIdError('comment');
    await runIncidentCommand(this.platform, incidentId, context, { kind: 'delete_comment', comment_id: commentId }, incident);
  }
}

@CommandHandler(AddCheckpoint)
export class AddCheckpointHandler implements ICommandHandler<AddCheckpoint> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, incidentId, body, context }: AddCheckpoint): Promise<Checkpoint> {
    const incident = await writableIncident(this.platform, teamId, incidentId);
    failIfInvalid(body.errors);
    const id = await this.platform.ids.next('checkpoint');
    const { title, body: text, status_label } = body.value;
    const state = await runIncidentCommand(this.platform, incidentId, context, { kind: 'add_checkpoint', checkpoint_id: id, title, body: text, status_label }, incident);
    return toCheckpoint(state.checkpoints.get(id)!);
  }
}

@CommandHandler(EditCheckpoint)
export class EditCheckpointHandler implements ICommandHandler<EditCheckpoint> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, incidentId, checkpointId, body, context }: EditCheckpoint): Promise<Checkpoint> {
    const incident = await writableIncident(this.platform, teamId, incidentId);
    if (!incident.checkpoints.has(checkpointId)) throw new UnknownIdError('checkpoint');
    failIfInvalid(body.errors);
    const { title, body: text, status_label } = body.value;
    const state = await runIncidentCommand(this.platform, incidentId, context, { kind: 'update_checkpoint', checkpoint_id: checkpointId, title, body: text, status_label }, incident);
    return toCheckpoint(state.checkpoints.get(checkpointId)!);
  }
}

export const noteCommandHandlers = [AddCommentHandler, EditCommentHandler, DeleteCommentHandler, AddCheckpointHandler, EditCheckpointHandler];
