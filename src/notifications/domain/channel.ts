/**
 * A notification channel: where a team's incident and alert events are delivered (a signed
 * webhook, a Slack or Discord incoming webhook, email, PagerDuty). One stream per channel,
 * `notification-channel-<id>`.
 *
 * Hidden values: the URL (its path and query carry credentials), the webhook signing secrets and
 * PagerDuty's routing key live in the stream's events only. Views and responses hold
 * `url_configured` and `host`, never the values.
 */
import type { NotificationType } from './notification-types.js';

export const CHANNEL_CREATED = 'NotificationChannelCreated';
export const CHANNEL_UPDATED = 'NotificationChannelUpdated';
export const CHANNEL_SECRET_ROTATED = 'NotificationChannelSecretRotated';
export const CHANNEL_DISABLED_BY_RECEIVER = 'NotificationChannelDisabledByReceiver';
export const CHANNEL_DELETED = 'NotificationChannelDeleted';
export const CHANNEL_TEST_REQUESTED = 'NotificationChannelTestRequested';

export const CHANNEL_KINDS = ['webhook', 'slack', 'discord', 'email', 'pagerduty'] as const;
export type ChannelKind = (typeof CHANNEL_KINDS)[number];

/** While a rotated-out secret still signs (alongside the new one). */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 60 * 60 * 1000;
export const PAGERDUTY_EVENTS_URL = 'https://events.pagerduty.com/v2/enqueue';
export const MAX_EMAIL_RECIPIENTS = 20;

export function channelStream(channelId: number): string {
  return `notification-channel-${channelId}`;
}

/** Whether a stream is a channel's: its events hold the channel's hidden configuration and signing secrets. */
export function isChannelStream(stream: string): boolean {
  return /^notification-channel-\d+$/.test(stream);
}

/** Hidden configuration: never in a view, a response, a log line or a delivery record. */
export interface ChannelConfig {
  /** webhook, slack, discord: required; pagerduty: optional override of the Events API URL. */
  url?: string;
  /** email: 1-20 addresses. */
  to?: string[];
  /** pagerduty: the integration's routing key. */
  routing_key?: string;
}

/** What a channel's filters and public view hold. */
export interface ChannelSettings {
  name: string;
  /** null: every type. */
  events: NotificationType[] | null;
  /** null: every project of the team. */
  project_ids: number[] | null;
  enabled: boolean;
}

export interface ChannelCreatedData extends ChannelSettings {
  channel_id: number;
  team_id: number;
  kind: ChannelKind;
  config: ChannelConfig;
  /** webhook only: `whsec_` + base64 of 32 random bytes. */
  secret: string | null;
  created_at: string;
}

export interface ChannelUpdatedData {
  channel_id: number;
  team_id: number;
  changes: Partial<ChannelSettings> & { config?: ChannelConfig };
  updated_at: string;
}

export interface ChannelSecretRotatedData {
  channel_id: number;
  team_id: number;
  secret: string;
  /** The previous secret keeps signing until then. */
  previous_expires_at: string;
  rotated_at: string;
}

export interface ChannelDisabledByReceiverData {
  channel_id: number;
  team_id: number;
  /** e.g. `status: 410 Gone` */
  reason: string;
  delivery_id: string;
  disabled_at: string;
}

export interface ChannelDeletedData {
  channel_id: number;
  team_id: number;
  deleted_at: string;
}

export interface ChannelTestRequestedData {
  channel_id: number;
  team_id: number;
  requested_at: string;
}

export type ChannelEvent =
  | { type: typeof CHANNEL_CREATED; data: ChannelCreatedData }
  | { type: typeof CHANNEL_UPDATED; data: ChannelUpdatedData }
  | { type: typeof CHANNEL_SECRET_ROTATED; data: ChannelSecretRotatedData }
  | { type: typeof CHANNEL_DISABLED_BY_RECEIVER; data: ChannelDisabledByReceiverData }
  | { type: typeof CHANNEL_DELETED; data: ChannelDeletedData }
  | { type: typeof CHANNEL_TEST_REQUESTED; data: ChannelTestRequestedData };

export interface Channel extends ChannelSettings {
  id: number;
  team_id: number;
  kind: ChannelKind;
  config: ChannelConfig;
  /** Signing secrets, newest first, each with the time it stops signing (null: current). */
  secrets: Array<{ secret: string; expires_at: string | null }>;
  /** Why the service disabled it (a 410 from the receiver); null otherwise. */
  disabled_reason: string | null;
  deleted: boolean;
  created_at: string;
  updated_at: string;
}

export type ChannelState = Channel | null;

export function initialChannelState(): ChannelState {
  return null;
}

export function evolveChannel(state: ChannelState, event: { type: string; data: unknown }): ChannelState {
  const e = event as ChannelEvent;
  if (e.type === CHANNEL_CREATED) {
    const d = e.data;
    return {
      id: d.channel_id,
      team_id: d.team_id,
      kind: d.kind,
      name: d.name,
      events: d.events,
      project_ids: d.project_ids,
      enabled: d.enabled,
      config: d.config,
      secrets: d.secret ? [{ secret: d.secret, expires_at: null }] : [],
      disabled_reason: null,
      deleted: false,
      created_at: d.created_at,
      updated_at: d.created_at,
    };
  }
  if (state === null) return state;
  switch (e.type) {
    case CHANNEL_UPDATED: {
      const { config, ...settings } = e.data.changes;
      const enabledAgain = settings.enabled === true;
      return {
        ...state,
        ...settings,
        config: config ? { ...state.config, ...config } : state.config,
        disabled_reason: enabledAgain ? null : state.disabled_reason,
        updated_at: e.data.updated_at,
      };
    }
    case CHANNEL_SECRET_ROTATED:
      return {
        ...state,
        secrets: [
          { secret: e.data.secret, expires_at: null },
          ...state.secrets.filter((s) => s.expires_at === null).map((s) => ({ ...s, expires_at: e.data.previous_expires_at })),
        ],
        updated_at: e.data.rotated_at,
      };
    case CHANNEL_DISABLED_BY_RECEIVER:
      return { ...state, enabled: false, disabled_reason: e.data.reason, updated_at: e.data.disabled_at };
    case CHANNEL_DELETED:
      return { ...state, deleted: true, updated_at: e.data.deleted_at };
    default:
      return state;
  }
}

/** The channel aggregate as the stream-command helpers take it. */
export const channelAggregate = { initial: initialChannelState, evolve: evolveChannel };

/** Secrets that sign a delivery attempted at `now`: the current one and any still in grace. */
export function signingSecrets(channel: Channel, now: number): string[] {
  return channel.secrets.filter((s) => s.expires_at === null || Date.parse(s.expires_at) > now).map((s) => s.secret);
}

/** Whether an event of `type` about `projectId` goes to the channel (tests bypass this). */
export function channelWants(channel: Pick<ChannelSettings, 'enabled' | 'events' | 'project_ids'>, type: NotificationType, projectId: number | null): boolean {
  if (!channel.enabled) return false;
  if (channel.events !== null && !channel.events.includes(type)) return false;
  if (channel.project_ids !== null && (projectId === null || !channel.project_ids.includes(projectId))) return false;
  return true;
}

/** Host (with port when not the scheme's default) of a channel URL: the only part shown. */
export function urlHost(url: string | undefined): string | null {
  if (!url) return null;
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}
