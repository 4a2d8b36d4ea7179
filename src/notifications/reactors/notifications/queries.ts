import { Inject, Injectable } from '@nestjs/common';
import { CursorCodec, type Pagination } from '../../../platform/http/pagination.js';
import { NotificationsNotFoundError } from '../../domain/errors.js';
import { PLATFORM, type Platform } from '../../../platform/platform.js';
import type { Doc, SortDirection } from '../../../platform/read-store/read-store.port.js';
import type { ChannelDoc } from '../../domain/channel-view.js';
import { publicState, type AttemptState, type DeliveryRecord } from '../../domain/delivery.js';
import { physicalCollection } from '../../../platform/projections/registry.js';
import { ATTEMPTS, ATTEMPTS_SPEC, DELIVERY_WORKER } from '../../application/attempt-store.js';
import { CHANNELS, DELIVERIES, NOTIFICATIONS_VIEW } from './view.js';

const CHANNEL_SORT: Array<[string, SortDirection]> = [['channel_num', 'asc']];
const DELIVERY_SORT: Array<[string, SortDirection]> = [['position', 'desc'], ['id', 'desc']];

export interface ChannelPresented {
  id: number;
  team_id: number;
  name: string;
  kind: string;
  events: string[] | null;
  project_ids: number[] | null;
  enabled: boolean;
  disabled_reason: string | null;
  url_configured: boolean;
  host: string | null;
  config: Record<string, unknown>;
  secret_rotation_ends_at?: string | null;
  created_at: string;
  updated_at: string;
}

/** The channel as responses show it: hidden values only as `url_configured`, `host` and flags. */
export function presentChannel(doc: ChannelDoc, now = Date.now()): ChannelPresented {
  const config: Record<string, unknown> = {};
  if (doc.kind === 'email') config.to = doc.to ?? [];
  if (doc.kind === 'pagerduty') config.routing_key_configured = doc.routing_key_configured;
  const rotationEnds = doc.previous_secret_expires_at && Date.parse(doc.previous_secret_expires_at) > now ? doc.previous_secret_expires_at : null;
  return {
    id: doc.channel_num,
    team_id: doc.team_id,
    name: doc.name,
    kind: doc.kind,
    events: doc.events,
    project_ids: doc.project_ids,
    enabled: doc.enabled,
    disabled_reason: doc.disabled_reason,
    url_configured: doc.url_configured,
    host: doc.host,
    config,
    ...(doc.kind === 'webhook' ? { secret_rotation_ends_at: rotationEnds } : {}),
    created_at: doc.created_at,
    updated_at: doc.updated_at,
  };
}

export function presentDelivery(record: DeliveryRecord, attempt: AttemptState | undefined) {
  return {
    id: record.id,
    event_id: record.event_id,
    type: record.type,
    state: attempt ? publicState(attempt.state) : 'pending',
    attempts: attempt?.attempts ?? 0,
    last_status_code: attempt?.last_status_code ?? null,
    last_error: attempt?.last_error ?? null,
    next_attempt_at: attempt ? (attempt.next_attempt_ms === null ? null : new Date(attempt.next_attempt_ms).toISOString()) : record.created_at,
    delivered_at: attempt?.delivered_at ?? null,
    created_at: record.created_at,
  };
}

@Injectable()
export class ChannelReads {
  private readonly cursors: CursorCodec;

  constructor(@Inject(PLATFORM) private readonly platform: Platform) {
    this.cursors = new CursorCodec(platform.cursorKey);
  }

  private async doc(teamId: number, channelId: number): Promise<ChannelDoc | null> {
    const doc = (await this.platform.reader.get(NOTIFICATIONS_VIEW, CHANNELS, channelId)) as ChannelDoc | null;
    return doc && doc.team_id === teamId ? doc : null;
  }

  async exists(teamId: number | null, channelId: number): Promise<boolean> {
    const doc = (await this.platform.reader.get(NOTIFICATIONS_VIEW, CHANNELS, channelId)) as ChannelDoc | null;
    return doc !== null && (teamId === null || doc.team_id === teamId);
  }

  async channel(teamId: number, channelId: number): Promise<ChannelPresented> {
    const doc = await this.doc(teamId, channelId);
    if (!doc) throw new NotificationsNotFoundError('The notification channel');
    return presentChannel(doc);
  }

  async channels(teamId: number, limit: number, cursor: string | undefined): Promise<{ data: ChannelPresented[]; pagination: Pagination }> {
    const bound = { list: 'notification_channels', team_id: teamId };
    const after = this.cursors.decode(cursor, bound);
    const rows = await this.platform.reader.find(NOTIFICATIONS_VIEW, CHANNELS, { filter: { team_id: teamId }, sort: CHANNEL_SORT, after, limit: limit + 1 });
    const page = this.cursors.page(rows, limit, CHANNEL_SORT, bound);
    return { data: page.rows.map((row) => presentChannel(row as unknown as ChannelDoc)), pagination: page.pagination };
  }

  /** Newest first. */
  async deliveries(teamId: number, channelId: number, limit: number, cursor: string | undefined) {
    if (!(await this.doc(teamId, channelId))) throw new NotificationsNotFoundError('The notification channel');
    const bound = { list: 'notification_deliveries', channel_id: channelId };
    const after = this.cursors.decode(cursor, bound);
    const rows = await this.platform.reader.find(NOTIFICATIONS_VIEW, DELIVERIES, { filter: { channel_id: channelId }, sort: DELIVERY_SORT, after, limit: limit + 1 });
    const page = this.cursors.page(rows, limit, DELIVERY_SORT, bound);
    const attempts = await this.attempts(page.rows.map((row) => row.id));
    return {
      data: page.rows.map((row) => presentDelivery(row as unknown as DeliveryRecord, attempts.get(row.id))),
      pagination: page.pagination,
    };
  }

  private ensured = false;

  private async attempts(ids: string[]): Promise<Map<string, AttemptState>> {
    if (ids.length === 0) return new Map();
    if (!this.ensured) {
      // A process that does not run the worker (API only) may start before any that does.
      await this.platform.views.ensureCollection({ ...ATTEMPTS_SPEC, name: physicalCollection(DELIVERY_WORKER, 1, ATTEMPTS) });
      this.ensured = true;
    }
    const docs: Doc[] = await this.platform.reader.getMany(DELIVERY_WORKER, ATTEMPTS, ids);
    return new Map(docs.map((doc) => [doc.id, doc as unknown as AttemptState]));
  }
}
