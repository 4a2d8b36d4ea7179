/**
 * The channel view (what the admin API shows and the reactor filters on): no hidden values.
 * Defined here, written by the notifications reactor (projections/notifications.ts).
 */
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
 * The delivery's id, its `webhook-id`: `msg_`, the event's log position in 13 zero-padded base-36
 * digits (any position up to 2^64 fits), `_`, the channel id in base 36.
 * - Stable per event and channel, so a replayed batch could only ever write the same record.
 * - In log order: records and attempt states are added at the end of their tables' key order.
 *   Ids hashed from the event and channel spread every batch over the whole key, which made each
 *   SQLite insert about three times dearer (docs/benchmarks.md, Notification delivery).
 */
export function deliveryId(position: number, channelId: number): string {
  // A store that cannot tell an event's position (EventStoreDB before 22.6 on stream reads) has no id to give.
  if (!Number.isSafeInteger(position) || position < 0) throw new Error(`A delivery id needs the event's log position, got ${position}`);
  return `msg_${position.toString(36).padStart(13, '0')}_${channelId.toString(36)}`;
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

