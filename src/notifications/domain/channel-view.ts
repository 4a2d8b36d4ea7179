/**
 * The channel view (what the admin API shows and the reactor filters on): no hidden values.
 * Defined here, written by the notifications reactor (reactors/notifications/reactor.ts).
 */
import { createHash } from 'node:crypto';
import type { Channel } from './channel.js';
import type { NotificationType } from './notification-types.js';

export interface ChannelDoc {
  id: string;
  channel_num: number;
  team_id: number;
  name: string;
  kind: Channel['kind'];
  events: NotificationType[] | null;
  project_ids: number[] | null;
  enabled: boolean;
  disabled_reason: string | null;
  url_configured: boolean;
  host: string | null;
  /** email only: the recipients. */
  to: string[] | null;
  /** pagerduty only. */
  routing_key_configured: boolean;
  /** webhook only: when the previous secret stops signing (null when only one is active). */
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export function toChannelDoc(channel: Channel): ChannelDoc {
  const previous = channel.secrets.find((s) => s.expires_at !== null);
  let host: string | null = null;
  try {
    host = channel.config.url ? new URL(channel.config.url).host : null;
  } catch {
    host = null;
  }
  return {
    id: String(channel.id),
    channel_num: channel.id,
    team_id: channel.team_id,
    name: channel.name,
    kind: channel.kind,
    events: channel.events,
    project_ids: channel.project_ids,
    enabled: channel.enabled,
    disabled_reason: channel.disabled_reason,
    url_configured: Boolean(channel.config.url),
    host,
    to: channel.config.to ?? null,
    routing_key_configured: Boolean(channel.config.routing_key),
    previous_secret_expires_at: previous?.expires_at ?? null,
    created_at: channel.created_at,
    updated_at: channel.updated_at,
  };
}

/**
 * The reactor keeps the folded channel (hidden values included) in a private field of the
 * document so each event is applied with the domain's own evolve; `toChannelDoc` is what readers
 * get. The private fold is stripped before anything leaves the service (see channel reads).
 */
export interface StoredChannel extends ChannelDoc {
  folded: Channel;
}

/**
 * The delivery's id, its `webhook-id`: `msg_` and a ULID (26 Crockford base-32 characters) whose
 * time is the event's recording time and whose other 80 bits are a hash of event and channel.
 * - Stable per event and channel, so a replayed batch could only ever write the same record.
 * - In time order: records and attempt states are added at the end of their tables' keys, where
 *   an insert is cheapest (ids hashed from event and channel alone would spread every batch
 *   over the whole key).
 * - Telling no more than the payload does: the log position would order as well, but would show
 *   every receiver how many events the whole service records.
 */
export function deliveryId(event: { id: string; recordedAt: string }, channelId: number): string {
  const ms = Date.parse(event.recordedAt);
  if (!Number.isSafeInteger(ms) || ms < 0) throw new Error(`A delivery id needs the event's recording time, got ${event.recordedAt}`);
  const hash = createHash('sha256').update(`${event.id}:${channelId}`).digest();
  return `msg_${crockford(ms, 10)}${crockfordBytes(hash, 16)}`;
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** `value` in `length` base-32 digits, most significant first (a ULID's time part). */
function crockford(value: number, length: number): string {
  let out = '';
  for (let rest = value, i = 0; i < length; i++, rest = Math.floor(rest / 32)) out = CROCKFORD[rest % 32] + out;
  return out;
}

/** The first `length` * 5 bits of `bytes` in base 32 (a ULID's random part). */
function crockfordBytes(bytes: Buffer, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) {
    const bit = i * 5;
    const pair = (bytes[bit >> 3] << 8) | (bytes[(bit >> 3) + 1] ?? 0);
    out += CROCKFORD[(pair >> (11 - (bit & 7))) & 31];
  }
  return out;
}

/**
 * The reactor's fold keeps what the view shows and the filters need; hidden values stay in the
 * channel's stream: the URL is cut to its scheme and host, the routing key and secrets to markers.
 */
export function stripHidden(channel: Channel): Channel {
  const { url, to, routing_key } = channel.config;
  let origin: string | undefined;
  try {
    origin = url ? `${new URL(url).origin}/` : undefined;
  } catch {
    origin = undefined;
  }
  return {
    ...channel,
    config: { ...(origin ? { url: origin } : {}), ...(to ? { to } : {}), ...(routing_key ? { routing_key: 'configured' } : {}) },
    secrets: channel.secrets.map((s) => ({ secret: '', expires_at: s.expires_at })),
  };
}

