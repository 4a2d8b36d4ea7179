import { systemContext } from '../../platform/es/command-context.js';
import { loadStream, runStreamCommand } from '../../platform/es/stream-command.js';
import type { Platform } from '../../platform/platform.js';
import type { Doc } from '../../platform/read-store/read-store.port.js';
import { CHANNEL_DISABLED_BY_RECEIVER, channelAggregate, channelStream, type Channel } from '../domain/channel.js';
import { afterAttempt, cancelled, DEFAULT_RETRY_SCHEDULE_MS, DELIVERY_TIMEOUT_MS, pendingState, type AttemptState, type DeliveryRecord } from '../domain/delivery.js';
import { ATTEMPTS_COLLECTION, ATTEMPTS_SPEC, INTAKE_ID } from './attempt-store.js';
import { buildPayload, endpointNames } from './payloads.js';
import type { Senders } from './senders.js';

export interface DeliveryWorkerOptions {
  retryScheduleMs?: readonly number[];
  timeoutMs?: number;
  /** How often to look for due deliveries (other processes' records, retries); in-process appends wake it at once. */
  pollMs?: number;
  /**
   * Attempts one process runs at once, in all (default 32) and per channel (default 1, so a
   * channel's first attempts go out in log order): a slow receiver holds only its own slots.
   */
  maxInFlight?: number;
  perChannel?: number;
}

const INTAKE_LEASE = 'notifications-intake';
const INTAKE_BATCH = 500;
const VIEW = 'notifications';

/**
 * Sends what the notifications reactor recorded.
 *
 * - Intake (one process at a time, lease `notifications-intake`): reads the reactor's delivery
 *   records after its cursor and creates a pending `AttemptState` for each, in one commit with
 *   the cursor (fenced on the cursor's previous value).
 * - Dispatch (every process): finds channels with due attempts, and for each channel with a
 *   free slot its oldest due attempts. Each attempt is claimed in the coordination store
 *   (`notification-delivery:<id>`, longer than the send timeout), so two processes never send
 *   one delivery at once; the state is re-read under the claim and written before it is released.
 * - A 410 from the receiver disables the channel (an event on its stream); a deleted or disabled
 *   channel's pending deliveries are cancelled instead of sent (a test ping goes even to a
 *   disabled channel).
 */
export class DeliveryWorker {
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  private readonly inFlight = new Map<string, { channelId: number; done: Promise<void> }>();
  private readonly schedule: readonly number[];
  private readonly claimTtlMs: number;

  constructor(
    private readonly platform: Platform,
    private readonly senders: Senders,
    private readonly options: DeliveryWorkerOptions = {},
  ) {
    this.schedule = options.retryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS;
    // Outlasts one send (its timeout) and the state write after it.
    this.claimTtlMs = (options.timeoutMs ?? DELIVERY_TIMEOUT_MS) + 10_000;
  }

  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    await this.platform.views.ensureCollection(ATTEMPTS_SPEC);
    this.timer = setInterval(() => this.kick(), this.options.pollMs ?? 250);
    this.unsubscribe = this.platform.runner?.onApplied(() => this.kick()) ?? null;
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.unsubscribe?.();
    await this.running;
    // Attempts under way are cut off, not waited for (a receiver may hold for the whole timeout):
    // they are not recorded, stay pending and go out again (same webhook-id) after the restart.
    await this.senders.abort();
    await Promise.allSettled([...this.inFlight.values()].map((f) => f.done));
    await this.platform.coordination.releaseLease(INTAKE_LEASE, this.platform.instanceId).catch(() => undefined);
  }

  /** Runs a pass now, or right after the one under way. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass()
      .catch((error) => this.platform.logger.warn({ err: error }, 'notification delivery pass failed'))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async pass(): Promise<void> {
    while (!this.stopped && (await this.intake()) === INTAKE_BATCH);
    if (!this.stopped) await this.dispatch();
  }

  /** Returns how many records it took in. */
  private async intake(): Promise<number> {
    const { coordination, views, reader, instanceId } = this.platform;
    if (!(await coordination.acquireLease(INTAKE_LEASE, instanceId, 10_000))) return 0;
    const cursor = await views.get(ATTEMPTS_COLLECTION, INTAKE_ID);
    const position = (cursor?.position as number | undefined) ?? null;
    const after = position === null ? undefined : [position, String(cursor!.last_id)];
    const records = await reader.find(VIEW, 'deliveries', { sort: [['position', 'asc'], ['id', 'asc']], after, limit: INTAKE_BATCH });
    if (records.length === 0) return 0;
    const now = Date.now();
    const at = new Date(now).toISOString();
    const last = records[records.length - 1];
    await views.commit(
      [
        ...records.map((r) => ({ op: 'put' as const, collection: ATTEMPTS_COLLECTION, doc: pendingState(r.id, Number(r.channel_id), Number(r.position), now, at) as unknown as Doc })),
        { op: 'put', collection: ATTEMPTS_COLLECTION, doc: { id: INTAKE_ID, position: last.position as number, last_id: last.id, updated_at: at } },
      ],
      { expect: [{ collection: ATTEMPTS_COLLECTION, id: INTAKE_ID, field: 'position', value: position }] },
    );
    return records.length;
  }

  private async dispatch(): Promise<void> {
    const maxInFlight = this.options.maxInFlight ?? 32;
    const perChannel = this.options.perChannel ?? 1;
    const now = Date.now();
    const due = { state: 'pending', next_attempt_ms: { lte: now } };
    const channels = await this.platform.views.aggregate(ATTEMPTS_COLLECTION, { filter: due, groupBy: 'channel_id' });
    for (const { group } of channels) {
      const channelId = Number(group);
      const busy = [...this.inFlight.values()].filter((f) => f.channelId === channelId).length;
      const free = Math.min(perChannel - busy, maxInFlight - this.inFlight.size);
      if (free <= 0) continue;
      const attempts = await this.platform.views.find(ATTEMPTS_COLLECTION, {
        filter: { channel_id: channelId, ...due },
        sort: [['next_attempt_ms', 'asc'], ['position', 'asc'], ['id', 'asc']],
        limit: free + busy,
      });
      let started = 0;
      for (const attempt of attempts) {
        if (started >= free) break;
        if (this.inFlight.has(attempt.id)) continue;
        started++;
        const done = this.attempt(attempt.id).finally(() => {
          this.inFlight.delete(attempt.id);
          this.kick();
        });
        this.inFlight.set(attempt.id, { channelId, done });
      }
    }
  }

  private async attempt(id: string): Promise<void> {
    const { coordination, instanceId, logger } = this.platform;
    const claim = `notification-delivery:${id}`;
    if (!(await coordination.acquireLease(claim, instanceId, this.claimTtlMs))) return;
    try {
      await this.claimed(id);
    } catch (error) {
      logger.warn({ err: error, delivery_id: id }, 'notification attempt failed unexpectedly; it stays pending');
    } finally {
      await coordination.releaseLease(claim, instanceId).catch(() => undefined);
    }
  }

  private async claimed(id: string): Promise<void> {
    const { views, reader, events, logger } = this.platform;
    const state = (await views.get(ATTEMPTS_COLLECTION, id)) as AttemptState | null;
    // Sent by another process between the query and the claim, or not due yet.
    if (!state || state.state !== 'pending' || (state.next_attempt_ms ?? Infinity) > Date.now()) return;
    const record = (await reader.get(VIEW, 'deliveries', id)) as DeliveryRecord | null;
    const { state: channel } = await loadStream(events, channelStream(state.channel_id), channelAggregate);
    if (!record || !channel || channel.deleted) return this.write(state, cancelled(state, 'channel deleted', Date.now()));
    if (!channel.enabled && record.type !== 'ping') return this.write(state, cancelled(state, 'channel disabled', Date.now()));

    const payload = await buildPayload(this.platform, record);
    const names = channel.kind === 'webhook' ? new Map<number, string>() : await endpointNames(this.platform, payload);
    const outcome = await this.senders.send({ deliveryId: id, channel, payload, endpointNames: names });
    if (this.stopped) return;
    const next = afterAttempt(state, outcome, Date.now(), this.schedule);
    await this.write(state, next);
    logger.info(
      { delivery_id: id, channel_id: channel.id, type: record.type, attempt: next.attempts, state: next.state, status: outcome.status, error: outcome.error },
      'notification attempt',
    );
    if (outcome.status === 410 && channel.enabled) await this.disable(channel, id);
  }

  /** Fenced on the attempt count read under the claim: a writer that lost its claim changes nothing. */
  private async write(before: AttemptState, after: AttemptState): Promise<void> {
    await this.platform.views.commit([{ op: 'put', collection: ATTEMPTS_COLLECTION, doc: after as unknown as Doc }], {
      expect: [{ collection: ATTEMPTS_COLLECTION, id: before.id, field: 'attempts', value: before.attempts }],
    });
  }

  private async disable(channel: Channel, deliveryId: string): Promise<void> {
    await runStreamCommand(this.platform.events, channelStream(channel.id), channelAggregate, systemContext('notifications'), (state) => {
      if (!state || state.deleted || !state.enabled) return { events: [], result: undefined };
      const data = { channel_id: channel.id, team_id: channel.team_id, reason: 'status: 410 Gone', delivery_id: deliveryId, disabled_at: new Date().toISOString() };
      return { events: [{ type: CHANNEL_DISABLED_BY_RECEIVER, data }], result: undefined };
    });
  }
}
