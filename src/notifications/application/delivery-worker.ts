import { systemContext } from '../../platform/es/command-context.js';
import { runStreamCommand } from '../../platform/es/stream-command.js';
import { StreamCache } from '../../platform/es/stream-cache.js';
import type { Platform } from '../../platform/platform.js';
import type { CollectionStamps, Doc, Filter } from '../../platform/read-store/read-store.port.js';
import { CHANNEL_DISABLED_BY_RECEIVER, channelAggregate, channelStream, type Channel, type ChannelState } from '../domain/channel.js';
import { afterAttempt, cancelled, DEFAULT_RETRY_SCHEDULE_MS, DELIVERY_TIMEOUT_MS, pendingState, type AttemptState, type DeliveryRecord } from '../domain/delivery.js';
import { ATTEMPTS_COLLECTION, ATTEMPTS_SPEC, INTAKE_ID } from './attempt-store.js';
import { AttemptWriter } from './attempt-writer.js';
import { buildPayload, endpointNames } from './payloads.js';
import type { Senders } from './senders.js';
import { DELIVERIES, NOTIFICATIONS_VIEW } from '../domain/views.js';

export interface DeliveryWorkerOptions {
  retryScheduleMs?: readonly number[];
  timeoutMs?: number;
  /** How often to look for due deliveries (other processes' records, retries); in-process appends wake it at once. */
  pollMs?: number;
  /**
   * Attempts one process runs at once (default 32), at most one per channel (so a channel's
   * first attempts go out in log order): a slow receiver holds only its own lane.
   */
  maxInFlight?: number;
}

const INTAKE_LEASE = 'notifications-intake';
const INTAKE_BATCH = 500;
/** Due attempts a channel's lane reads at once. */
const LANE_PAGE = 50;
/** A lane renews its channel claim once this much of it has passed. */
const RENEW_AFTER_MS = 5_000;

/**
 * Sends what the notifications reactor recorded.
 *
 * - Intake (one process at a time, lease `notifications-intake`): reads the reactor's delivery
 *   records after its cursor and creates a pending `AttemptState` for each, in one commit with
 *   the cursor (fenced on the cursor's previous value).
 * - Dispatch (every process): finds channels with due attempts and runs a lane per channel: the
 *   channel is claimed in the coordination store (`notification-channel:<id>`, a lease outlasting
 *   one send, renewed between sends), so two processes never send one delivery (nor one
 *   channel's deliveries) at once; its due attempts are read under the claim and sent one after
 *   another, each state written (fenced on its attempt count) before the next.
 * - A 410 from the receiver disables the channel (an event on its stream); a deleted or disabled
 *   channel's pending deliveries are cancelled instead of sent (a test ping goes even to a
 *   disabled channel).
 */
export class DeliveryWorker {
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  /**
   * The delivery records' stamps when an intake last found no more records: a pass (every kick
   * and poll) skips the intake's reads until the reactor has written records since.
   */
  private intakeDrainedAt: (CollectionStamps & { collection: string }) | null = null;
  private stopped = true;
  /** One lane per channel being sent to: at most one attempt per channel at a time in this process. */
  private readonly lanes = new Map<number, Promise<void>>();
  private readonly channels: StreamCache<ChannelState>;
  private readonly writer: AttemptWriter;
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
    this.writer = new AttemptWriter(platform.views);
    this.channels = new StreamCache(platform.events, channelAggregate.initial, channelAggregate.evolve, 10_000);
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
    await Promise.allSettled([...this.lanes.values()]);
    await this.platform.leases.release(INTAKE_LEASE).catch(() => undefined);
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
    const { views, reader, leases } = this.platform;
    // Kept by the process's LeaseKeeper (one write per renewal for all leases): asking the store on
    // every 250 ms poll wrote about 1 MB a minute to an idle service's coordination WAL.
    if (!(await leases.hold(INTAKE_LEASE))) return 0;
    // Taken before the read: a record committed after it changes the stamp, so it is looked for.
    const stamps = await reader.stamps(NOTIFICATIONS_VIEW, DELIVERIES);
    if (stamps && this.intakeDrainedAt?.collection === stamps.collection && this.intakeDrainedAt.changed === stamps.changed) return 0;
    const cursor = await views.get(ATTEMPTS_COLLECTION, INTAKE_ID);
    const position = (cursor?.position as number | undefined) ?? null;
    const after = position === null ? undefined : [position, String(cursor!.last_id)];
    const records = await reader.find(NOTIFICATIONS_VIEW, DELIVERIES, { sort: [['position', 'asc'], ['id', 'asc']], after, limit: INTAKE_BATCH });
    if (records.length === 0) {
      this.intakeDrainedAt = stamps;
      return 0;
    }
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
    // Only once committed: a failed commit leaves the records to be taken in by the next pass.
    if (records.length < INTAKE_BATCH) this.intakeDrainedAt = stamps;
    return records.length;
  }

  /**
   * Starts a lane for each channel with due attempts and a free slot. A lane takes the channel's
   * oldest due attempts (a page of them) and sends them one after another, then looks again; the
   * channel's page is read once per lane rather than once per attempt.
   */
  private async dispatch(): Promise<void> {
    const maxLanes = this.options.maxInFlight ?? 32;
    const due = (): Filter => ({ state: 'pending', next_attempt_ms: { lte: Date.now() } });
    const channels = await this.platform.views.aggregate(ATTEMPTS_COLLECTION, { filter: due(), groupBy: 'channel_id' });
    for (const { group } of channels) {
      const channelId = Number(group);
      if (this.lanes.has(channelId) || this.lanes.size >= maxLanes || this.stopped) continue;
      const lane = this.lane(channelId, due).finally(() => {
        this.lanes.delete(channelId);
        this.kick();
      });
      this.lanes.set(channelId, lane);
    }
  }

  /**
   * Sends a channel's due attempts one after another under the channel's claim in the
   * coordination store (`notification-channel:<id>`): while this process holds it, no other
   * process sends any of the channel's deliveries, so the states read under it are current.
   * The claim outlasts one send and is renewed before the next when it would not.
   *
   * Each attempt's new state goes to the writer, which commits the states of many attempts
   * together; the lane sends its next attempt meanwhile, and waits for its states to be
   * committed only before reading the channel's next page (so no attempt is read as still due
   * after it was sent) and before releasing the claim.
   */
  private async lane(channelId: number, due: () => Filter): Promise<void> {
    const { coordination, instanceId } = this.platform;
    const claim = `notification-channel:${channelId}`;
    let grant = await coordination.acquireLease(claim, instanceId, this.claimTtlMs);
    if (!grant) return;
    const recording: Promise<void>[] = [];
    try {
      for (;;) {
        // (next_attempt_ms, position) orders a channel's attempts fully (one record per event per
        // channel) and is the order of the channel's index: with `id` as a third key, SQLite
        // preferred the (state, next_attempt_ms) index and read every channel's due attempts for
        // each page (three times slower with 8,000 due).
        const page = (await this.platform.views.find(ATTEMPTS_COLLECTION, {
          filter: { channel_id: channelId, ...due() },
          sort: [['next_attempt_ms', 'asc'], ['position', 'asc']],
          limit: LANE_PAGE,
        })) as unknown as AttemptState[];
        const records = new Map((await this.platform.reader.getMany(NOTIFICATIONS_VIEW, DELIVERIES, page.map((a) => a.id))).map((r) => [r.id, r as unknown as DeliveryRecord]));
        for (const state of page) {
          if (this.stopped) return;
          if (grant.expiresAt - Date.now() < this.claimTtlMs - RENEW_AFTER_MS) {
            grant = await coordination.acquireLease(claim, instanceId, this.claimTtlMs);
            if (!grant) return;
          }
          recording.push((await this.attempt(state, records.get(state.id) ?? null)).committed);
        }
        await this.recorded(recording.splice(0));
        if (page.length < LANE_PAGE || this.stopped) return;
      }
    } finally {
      await this.recorded(recording);
      await coordination.releaseLease(claim, instanceId).catch(() => undefined);
    }
  }

  /** Waits until the states handed over are committed (or refused: logged, the delivery stays pending). */
  private async recorded(recording: Promise<void>[]): Promise<void> {
    if (recording.length === 0) return;
    await this.writer.flush();
    await Promise.all(recording);
  }

  /**
   * Sends one attempt (or cancels it) and hands its new state to the writer. Resolves once the
   * send is over, so that the lane may go on, into the commit of the state (settled: a failure
   * is logged and the delivery stays pending, to go out again).
   */
  private attempt(state: AttemptState, record: DeliveryRecord | null): Promise<{ committed: Promise<void> }> {
    const logged = (error: unknown) => this.platform.logger.warn({ err: error, delivery_id: state.id }, 'notification attempt failed unexpectedly; it stays pending');
    return this.claimed(state, record).then(
      (handed) => ({ committed: (handed?.committed ?? Promise.resolve()).catch(logged) }),
      (error) => ({ committed: Promise.resolve(logged(error)) }),
    );
  }

  /** Answers the commit of the attempt's new state, or nothing when the attempt was cut off by a stop. */
  private async claimed(state: AttemptState, record: DeliveryRecord | null): Promise<{ committed: Promise<void> } | undefined> {
    const { logger } = this.platform;
    const id = state.id;
    const { state: channel } = await this.channels.load(channelStream(state.channel_id));
    if (!record || !channel || channel.deleted) return { committed: this.writer.record(state, cancelled(state, 'channel deleted', Date.now())) };
    if (!channel.enabled && record.type !== 'ping') return { committed: this.writer.record(state, cancelled(state, 'channel disabled', Date.now())) };

    const payload = await buildPayload(this.platform, record);
    const names = channel.kind === 'webhook' ? new Map<number, string>() : await endpointNames(this.platform, payload);
    const outcome = await this.senders.send({ deliveryId: id, channel, payload, endpointNames: names });
    if (this.stopped) return undefined;
    const next = afterAttempt(state, outcome, Date.now(), this.schedule);
    const committed = this.writer.record(state, next).then(() =>
      logger.info(
        { delivery_id: id, channel_id: channel.id, type: record.type, attempt: next.attempts, state: next.state, status: outcome.status, error: outcome.error },
        'notification attempt',
      ),
    );
    if (outcome.status === 410 && channel.enabled) await this.disable(channel, id);
    return { committed };
  }

  private async disable(channel: Channel, deliveryId: string): Promise<void> {
    await runStreamCommand(this.platform.events, channelStream(channel.id), channelAggregate, systemContext('notifications'), (state) => {
      if (!state || state.deleted || !state.enabled) return { events: [], result: undefined };
      const data = { channel_id: channel.id, team_id: channel.team_id, reason: 'status: 410 Gone', delivery_id: deliveryId, disabled_at: new Date().toISOString() };
      return { events: [{ type: CHANNEL_DISABLED_BY_RECEIVER, data }], result: undefined };
    });
  }
}
