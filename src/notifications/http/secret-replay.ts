import type { FastifyRequest } from 'fastify';
import type { CoordinationStore } from '../../platform/coordination/coordination.port.js';

/**
 * A response that shows a secret once must not be kept for Idempotency-Key replays with the
 * secret in it. When the request carries a key, this settles the key itself with the response
 * minus the secret (`secret: null`), and takes the key off the request so the generic hook does
 * not store the full body. A replay then answers the same status and resource without the secret.
 */
export async function settleWithoutSecret(
  coordination: CoordinationStore,
  request: FastifyRequest,
  status: number,
  body: { data: Record<string, unknown> },
): Promise<void> {
  const key = request.idempotencyKey;
  if (!key) return;
  const kept = { ...body, data: { ...body.data, secret: null } };
  await coordination.completeIdempotency(key, { status, body: JSON.stringify(kept), headers: { 'content-type': 'application/json; charset=utf-8' } });
  request.idempotencyKey = undefined;
}
