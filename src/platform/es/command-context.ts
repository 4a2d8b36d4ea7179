import type { EventMetadata } from '../event-store/event-store.port.js';
import type { Principal } from '../http/route-auth.js';

/** Who asked and under which request: becomes the metadata of every event a command appends. */
export interface CommandContext {
  actor: string;
  requestId: string | null;
  correlationId?: string | null;
  causationId?: string | null;
}

export function actorOf(principal: Principal | undefined): string {
  if (!principal) return 'anonymous';
  return principal.kind === 'admin' ? 'admin' : `token:${principal.tokenId}`;
}

export function systemContext(component: string, correlationId: string | null = null, causationId: string | null = null): CommandContext {
  return { actor: `system:${component}`, requestId: null, correlationId, causationId };
}

export function metadataOf(context: CommandContext, occurredAt?: string): Partial<EventMetadata> {
  return {
    actor: context.actor,
    request_id: context.requestId,
    correlation_id: context.correlationId ?? context.requestId,
    causation_id: context.causationId ?? null,
    ...(occurredAt ? { occurred_at: occurredAt } : {}),
  };
}
