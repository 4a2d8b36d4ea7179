/**
 * Deliveries: one per notifying event per channel. Two documents with one owner each:
 * - the delivery record (`DeliveryRecord`), written once by the notifications reactor in the
 *   same commit as its checkpoint, so it exists exactly once per event per channel;
 * - its attempt state (`AttemptState`), written only by the delivery worker, under a claim in
 *   the coordination store.
 * Neither holds a secret or a channel URL.
 */
import type { NotificationType } from './notification-types.js';

export interface DeliveryRecord {
  /** `msg_` + a ULID (`deliveryId`): the `webhook-id`, the same on every attempt. */
  id: string;
  channel_id: number;
  team_id: number;
  type: NotificationType;
  /** The log event that raised it. */
  event_id: string;
  stream_id: string;
  revision: number;
  position: number;
  /** The event's time (RFC 3339): the payload's `timestamp`. */
  timestamp: string;
  /** Incident events: the incident whose summary (after the event) the payload carries. */
  incident_id: number | null;
  /** Alert events: the endpoint and the signal as alert-status shows it. */
  endpoint_id: number | null;
  signal: { type: string; state: 'ok' | 'triggered'; since: string | null; incident_id: number | null } | null;
  /** Extra payload data fixed when the record was made (checkpoint, merged sources, ping). */
  extra: Record<string, unknown>;
  created_at: string;
}

export type DeliveryStateName = 'pending' | 'delivered' | 'failed' | 'cancelled';

export interface AttemptState {
  id: string;
  channel_id: number;
  /** The record's log position: due attempts of a channel go out in log order. */
  position: number;
  state: DeliveryStateName;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  /** Epoch ms (indexed); null once settled. */
  next_attempt_ms: number | null;
  delivered_at: string | null;
  updated_at: string;
}

/** About 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: eight attempts in all, then `failed`. */
export const DEFAULT_RETRY_SCHEDULE_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
export const DELIVERY_TIMEOUT_MS = 15_000;

export interface AttemptOutcome {
  /** 2xx within the timeout (HTTP), or accepted by the SMTP server (email). */
  delivered: boolean;
  /** HTTP status, null when no answer came (refused, timeout, DNS, blocked). */
  status: number | null;
  /** Why the attempt failed; null when delivered. */
  error: string | null;
}

export function pendingState(id: string, channelId: number, position: number, dueMs: number, now: string): AttemptState {
  return { id, channel_id: channelId, position, state: 'pending', attempts: 0, last_status_code: null, last_error: null, next_attempt_ms: dueMs, delivered_at: null, updated_at: now };
}

/**
 * The state after one attempt. A failure waits the schedule's next step, spread by +-20% jitter
 * so that retries of one outage do not arrive together; past the last step it is `failed`.
 */
export function afterAttempt(
  state: AttemptState,
  outcome: AttemptOutcome,
  now: number,
  schedule: readonly number[] = DEFAULT_RETRY_SCHEDULE_MS,
  random: () => number = Math.random,
): AttemptState {
  const attempts = state.attempts + 1;
  const at = new Date(now).toISOString();
  const base = { ...state, attempts, last_status_code: outcome.status, updated_at: at };
  if (outcome.delivered) return { ...base, state: 'delivered', last_error: null, next_attempt_ms: null, delivered_at: at };
  const error = outcome.error ?? `status: ${outcome.status}`;
  const step = schedule[attempts - 1];
  if (step === undefined) return { ...base, state: 'failed', last_error: error, next_attempt_ms: null };
  const jitter = 0.8 + 0.4 * random();
  return { ...base, last_error: error, next_attempt_ms: now + Math.round(step * jitter) };
}

/** Settles a pending delivery without sending (its channel was deleted or disabled). */
export function cancelled(state: AttemptState, reason: string, now: number): AttemptState {
  return { ...state, state: 'cancelled', last_error: reason, next_attempt_ms: null, updated_at: new Date(now).toISOString() };
}

/** The state the deliveries list shows (`cancelled` ones are only reachable through a deleted channel, which is 404). */
export function publicState(state: DeliveryStateName): 'pending' | 'delivered' | 'failed' {
  return state === 'cancelled' ? 'failed' : state;
}
