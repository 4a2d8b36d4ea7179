import { monotonicNow } from '../../platform/coordination/lease-observation.js';
import { systemContext } from '../../platform/es/command-context.js';
import { runStreamCommand } from '../../platform/es/stream-command.js';
import { StreamCache } from '../../platform/es/stream-cache.js';
import type { Platform } from '../../platform/platform.js';
import type { Position } from '../../platform/event-store/event-store.port.js';
import type { Worker, WorkerHost } from '../../platform/projections/projection.js';
import { findIds, PreconditionFailedError, type CollectionStamps, type Filter } from '../../platform/read-store/read-store.port.js';
import { CHANNEL_DISABLED_BY_RECEIVER, channelAggregate, channelStream, type Channel, type ChannelState } from '../domain/channel.js';
import { afterAttempt, cancelled, DEFAULT_RETRY_SCHEDULE_MS, DELIVERY_TIMEOUT_MS, pendingState, type AttemptState, type DeliveryRecord } from '../domain/delivery.js';
import { adoptAttemptStore, dropEarlierAttemptStore, ATTEMPTS, ATTEMPTS_SPEC, DELIVERY_WORKER, RETRIES, RETRIES_SPEC } from './attempt-store.js';
import { AttemptWriter } from './attempt-writer.js';
import { buildPayload, endpointNames } from './payloads.js';
import type { Senders } from './senders.js';
import { DELIVERIES, NOTIFICATIONS_VIEW } from '../reactors/notifications/view.js';

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
  /** First attempts of one channel kept in memory (default 500); its lane reads the others from the records. */
  maxQueuedPerChannel?: number;
}

/** Delivery records read at once, by the scan and by the cursor's advance. */
const RECORDS_BATCH = 500;
/**
 * First attempts kept in memory, per channel and in all. Past them the scan goes on, noting that
 * the channel has more records than queued: its lane reads them from the records (by channel)
 * when its queue runs out. So a slow receiver's backlog neither fills memory nor holds back the
 * scan for other channels.
 */
const MAX_QUEUED_PER_CHANNEL = 500;
const MAX_QUEUED = 10_000;
/** How often the lease holder moves the checkpoint (it bounds the scan after a restart, and shows as lag). */
const CURSOR_EVERY_MS = 1_000;
/** Pages of settled records the checkpoint moves over in one go. */
const MAX_CURSOR_PAGES = 20;
/** Due attempts a channel's lane reads at once. */
const LANE_PAGE = 50;
/** A lane renews its channel claim once this much of it has passed. */
const RENEW_AFTER_MS = 5_000;

/**
 * Sends what the notifications reactor recorded: a worker hosted by the processor runner
 * (`Worker`, platform/projections/projection.ts), run by every process that runs processors.
 * Its state is where the runner keeps processors' state: `attempts` and `retries` are generation
 * 1 of `notifications_delivery` (attempt-store.ts), its checkpoint is in the runner's registry.
 *
 * - First attempts go straight from the reactor's delivery records: a record without an attempt
 *   state is pending, never attempted, due since it was recorded. Every process scans the records
 *   (after the checkpoint when it starts, then after the last it read) and keeps, per channel,
 *   those whose first attempt it has not seen recorded. Nothing is written per record before its
 *   first attempt: the attempt's outcome is its first state.
 * - Checkpoint (moved by the holder of the worker's lease, fenced on its previous value, at most
 *   once a second): a log position up to which every delivery record has a state, i.e. every
 *   notifying event had its first attempts; up to the notifications reactor's checkpoint when no
 *   record waits. It bounds the scan after a restart: a record sent but whose state was never
 *   recorded (a crash) is after it, is found again and goes out again (same webhook-id).
 * - Dispatch (every process): finds channels with due retries or first attempts and runs a lane per
 *   channel: the channel is claimed in the coordination store (`notification-channel:<id>`, a
 *   lease outlasting one send, renewed between sends), so two processes never send one delivery
 *   (nor one channel's deliveries) at once; its due attempts are read under the claim (a first
 *   attempt's record is sent only if it still has no state) and sent one after another, each
 *   state fenced on the attempt count read (for a first attempt: on there being no state).
 * - A 410 from the receiver disables the channel (an event on its stream); a deleted or disabled
 *   channel's pending deliveries are cancelled instead of sent (a test ping goes even to a
 *   disabled channel).
 */
export class DeliveryWorker implements Worker {
  readonly name = DELIVERY_WORKER;
  readonly collections = [ATTEMPTS_SPEC, RETRIES_SPEC];
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  /**
   * The delivery records' stamps when the scan last found no more records: a pass (every kick
   * and poll) skips the scan's read until the reactor has written records since.
   */
  private scanDrainedAt: (CollectionStamps & { collection: string }) | null = null;
  /** The last record the scan read; a position: the checkpoint it started after; `undefined` until the first scan. */
  private scanned: [position: number, id: string] | Position | null | undefined = undefined;
  /** First attempts found by the scan and not yet seen recorded, by channel, in log order. */
  private readonly fresh = new Map<number, FreshQueue>();
  private freshCount = 0;
  private cursorMovedAt = 0;
  /** No retry is due before `until` while the retries collection's stamp stays `changed` (see `channelsWithDueRetries`). */
  private retriesQuiet: { changed: number; until: number } | null = null;
  private stopped = true;
  /** One lane per channel being sent to: at most one attempt per channel at a time in this process. */
  private readonly lanes = new Map<number, Promise<void>>();
  private readonly channels: StreamCache<ChannelState>;
  private writer!: AttemptWriter;
  private host!: WorkerHost;
  /** Physical names of the worker's collections (given by the runner). */
  private attempts = '';
  private retries = '';
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
    this.channels = new StreamCache(platform.events, channelAggregate.initial, channelAggregate.evolve, 10_000);
  }

  /** Carries over the collections and cursor of the version that kept them outside the runner (once). */
  adopt(host: WorkerHost): Promise<Position | null> {
    return adoptAttemptStore(this.platform.views, host);
  }

  async start(host: WorkerHost): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    this.host = host;
    this.attempts = host.collection(ATTEMPTS);
    this.retries = host.collection(RETRIES);
    this.writer = new AttemptWriter(this.platform.views, { attempts: this.attempts, retries: this.retries });
    await dropEarlierAttemptStore(this.platform.views);
    this.timer = setInterval(() => this.kick(), this.options.pollMs ?? 250);
    this.unsubscribe = host.onApplied(() => this.kick());
    this.kick();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.unsubscribe?.();
    await this.running;
    // Attempts under way are cut off, not waited for (a receiver may hold for the whole timeout):
    // they are not recorded, stay pending and go out again (same webhook-id) after the restart.
    await this.senders.abort();
    await Promise.allSettled([...this.lanes.values()]);
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
    // One look at other processes' commits for the pass's stamps, taken after it began and shared
    // with requests arriving meanwhile (`ReadStore.stamps`): a pass runs after every batch the
    // notifications reactor applies, and a look each for its two stamps was most of its cost.
    const scope = {};
    await this.scan(scope);
    if (!this.stopped) await this.advanceCursor();
    if (!this.stopped) await this.dispatch(scope);
  }

  /** Reads the delivery records after the last it read into `fresh` (they may have states already: lanes look under their claim). */
  private async scan(scope: object): Promise<void> {
    const { reader } = this.platform;
    // Taken before the read: a record committed after it changes the stamp, so it is looked for.
    const stamps = await reader.stamps(NOTIFICATIONS_VIEW, DELIVERIES, scope);
    if (stamps && this.scanDrainedAt?.collection === stamps.collection && this.scanDrainedAt.changed === stamps.changed) return;
    if (this.scanned === undefined) this.scanned = await this.host.checkpoint();
    while (!this.stopped) {
      const records = (await reader.find(NOTIFICATIONS_VIEW, DELIVERIES, { sort: [['position', 'asc'], ['id', 'asc']], ...afterRecord(this.scanned), limit: RECORDS_BATCH })) as unknown as DeliveryRecord[];
      for (const record of records) this.enqueue(record);
      if (records.length > 0) this.scanned = [records[records.length - 1].position, records[records.length - 1].id];
      if (records.length < RECORDS_BATCH) {
        this.scanDrainedAt = stamps;
        return;
      }
    }
  }

  /** Queues a first attempt, or notes that its channel has more records than queued. */
  private enqueue(record: DeliveryRecord): void {
    const channelId = Number(record.channel_id);
    const position = Number(record.position);
    let queue = this.fresh.get(channelId);
    if (!queue) {
      queue = { records: [], through: position - 1, more: false };
      this.fresh.set(channelId, queue);
    }
    // A channel's records come in log order, one per position; its lane may have read this one already.
    if (position <= queue.through) return;
    if (queue.more || queue.records.length >= (this.options.maxQueuedPerChannel ?? MAX_QUEUED_PER_CHANNEL) || this.freshCount >= MAX_QUEUED) {
      queue.more = true;
      return;
    }
    queue.records.push(record);
    queue.through = position;
    this.freshCount++;
  }

  /** A channel's queued first attempts, read again from its records when the scan left some out. */
  private async queued(channelId: number): Promise<DeliveryRecord[]> {
    const queue = this.fresh.get(channelId);
    if (!queue) return [];
    if (queue.records.length === 0 && queue.more) {
      const records = (await this.platform.reader.find(NOTIFICATIONS_VIEW, DELIVERIES, {
        filter: { channel_id: channelId },
        sort: [['position', 'asc']],
        after: [queue.through],
        limit: LANE_PAGE,
      })) as unknown as DeliveryRecord[];
      // Fewer than a page: every record of the channel so far is queued; the scan queues the next.
      if (records.length < LANE_PAGE) queue.more = false;
      queue.records.push(...records);
      this.freshCount += records.length;
      if (records.length > 0) queue.through = Number(records[records.length - 1].position);
    }
    if (queue.records.length === 0 && !queue.more) this.fresh.delete(channelId);
    return queue.records.slice(0, LANE_PAGE);
  }

  /**
   * Moves the checkpoint (lease holder, at most once a second) over the records whose state is
   * recorded, and up to the notifications reactor's checkpoint once no record waits: after a
   * restart, the scan starts there.
   */
  private async advanceCursor(): Promise<void> {
    const { views, reader } = this.platform;
    if (Date.now() - this.cursorMovedAt < CURSOR_EVERY_MS) return;
    // Kept by the process's LeaseKeeper (one write per renewal for all leases): asking the store on
    // every 250 ms poll wrote about 1 MB a minute to an idle service's coordination WAL.
    if (!(await this.host.holds())) return;
    this.cursorMovedAt = Date.now();
    const cursor = await this.host.checkpoint();
    // Read first: every record up to it was committed before the records are read below.
    const recordedThrough = await reader.position(NOTIFICATIONS_VIEW);
    // Already there: no record lies after it (the quiet service's case, every second).
    if (cursor !== null && recordedThrough !== null && cursor >= recordedThrough) return;
    let to: Position | null = recordedThrough;
    let from = afterRecord(cursor);
    for (let page = 0; ; page++) {
      // Ids only, here and for the states: the checkpoint is moved over every record once a second.
      const ids = await reader.findIds(NOTIFICATIONS_VIEW, DELIVERIES, { sort: [['position', 'asc'], ['id', 'asc']], ...from, limit: RECORDS_BATCH });
      const recorded = new Set(ids.length === 0 ? [] : await findIds(views, this.attempts, { filter: { id: { in: ids } } }));
      const waiting = ids.findIndex((id) => !recorded.has(id));
      if (waiting < 0 && ids.length < RECORDS_BATCH) break;
      // Up to the position before the first record that waits (or, past the pages read at once, before the last read).
      const at = await reader.get(NOTIFICATIONS_VIEW, DELIVERIES, ids[waiting < 0 ? ids.length - 1 : waiting]);
      if (!at) return;
      if (waiting >= 0 || page === MAX_CURSOR_PAGES) {
        to = Number(at.position) - 1;
        break;
      }
      from = { after: [Number(at.position), String(at.id)] };
    }
    if (to === null || (cursor !== null && to <= cursor)) return;
    await this.host.moveCheckpoint(cursor, to); // false: another lease holder moved it meanwhile
  }

  /**
   * Channels with a retry due now. Every pass asks (each poll and each applied batch: about a
   * hundred times a second at 50 checks/s), and almost always none is due: after a read that
   * found none, the next retry's due time is noted with the retries' stamp, and until that time
   * passes or the collection changes (any process's write) nothing is read.
   */
  private async channelsWithDueRetries(due: () => Filter, scope: object): Promise<number[]> {
    const { views } = this.platform;
    // Taken before the reads: a retry written after them changes the stamp, so it is looked for.
    const stamps = views.stamps ? await views.stamps(this.retries, scope) : null;
    const quiet = this.retriesQuiet;
    if (stamps && quiet && quiet.changed === stamps.changed && Date.now() < quiet.until) return [];
    const rows = await views.aggregate(this.retries, { filter: due(), groupBy: 'channel_id' });
    this.retriesQuiet = null;
    if (stamps && rows.length === 0) {
      const [next] = await views.find(this.retries, { sort: [['next_attempt_ms', 'asc']], limit: 1 });
      this.retriesQuiet = { changed: stamps.changed, until: next ? Number(next.next_attempt_ms) : Infinity };
    }
    return rows.map(({ group }) => Number(group));
  }

  /**
   * Starts a lane for each channel with due attempts and a free slot. A lane takes the channel's
   * oldest due attempts (a page of them) and sends them one after another, then looks again; the
   * channel's page is read once per lane rather than once per attempt.
   */
  private async dispatch(scope: object): Promise<void> {
    const maxLanes = this.options.maxInFlight ?? 32;
    const due = (): Filter => ({ next_attempt_ms: { lte: Date.now() } });
    const channels = new Set([...this.fresh.keys(), ...(await this.channelsWithDueRetries(due, scope))]);
    for (const channelId of channels) {
      if (this.lanes.has(channelId) || this.lanes.size >= maxLanes || this.stopped) continue;
      const lane = this.lane(channelId, due)
        .catch((error) => {
          this.platform.logger.warn({ err: error, channel_id: channelId }, 'notification lane failed');
          return false;
        })
        .then((ran) => {
          this.lanes.delete(channelId);
          // A lane that could not claim its channel (another process sends to it) leaves it to the
          // poll: looking again at once would spin, each turn settling without I/O, and starve
          // this process's event loop until the other process let the claim go.
          if (ran) this.kick();
        });
      this.lanes.set(channelId, lane);
    }
  }

  /**
   * Sends a channel's due attempts one after another under the channel's claim in the
   * coordination store (`notification-channel:<id>`): while this process holds it, no other
   * process sends any of the channel's deliveries, so the states read under it are current.
   * The claim outlasts one send and is renewed before the next when it would not. A page holds
   * the channel's due retries, then its first attempts (records the scan found, sent only if
   * they still have no state: another process may have sent them before this one's claim).
   *
   * Each attempt's new state goes to the writer, which commits the states of many attempts
   * together; the lane sends its next attempt meanwhile, and waits for its states to be
   * committed only before reading the channel's next page (so no attempt is read as still due
   * after it was sent) and before releasing the claim.
   */
  private async lane(channelId: number, due: () => Filter): Promise<boolean> {
    const { coordination, instanceId, views, reader } = this.platform;
    const claim = `notification-channel:${channelId}`;
    let grant = await coordination.acquireLease(claim, instanceId, this.claimTtlMs);
    if (!grant) return false;
    const recording: Promise<boolean>[] = [];
    try {
      for (;;) {
        const retries = await this.dueRetries(channelId, due);
        const retried = new Map((await reader.getMany(NOTIFICATIONS_VIEW, DELIVERIES, retries.map((a) => a.id))).map((r) => [r.id, r as unknown as DeliveryRecord]));
        const firsts = await this.queued(channelId);
        const recorded = new Set(firsts.length === 0 ? [] : (await views.getMany(this.attempts, firsts.map((r) => r.id))).map((d) => d.id));
        const page: Array<{ before: AttemptState | null; record: DeliveryRecord | null }> = [
          ...retries.map((state) => ({ before: state, record: retried.get(state.id) ?? null })),
          ...firsts.filter((r) => !recorded.has(r.id)).map((record) => ({ before: null, record })),
        ];
        const handled = new Set(recorded);
        for (const { before, record } of page) {
          if (this.stopped) return true;
          // On this process's monotonic clock: the claim's end as its holder must count it.
          if (grant.validUntil - monotonicNow() < this.claimTtlMs - RENEW_AFTER_MS) {
            grant = await coordination.acquireLease(claim, instanceId, this.claimTtlMs);
            if (!grant) return false;
          }
          const state = before ?? firstState(record!);
          const settled = (await this.attempt(before, state, record)).committed;
          recording.push(before === null ? settled.then((done) => (done ? handled.add(state.id) : undefined, done)) : settled);
        }
        await this.recorded(recording.splice(0));
        this.forgetFresh(channelId, handled);
        // A first attempt left pending (a failed commit) waits for the poll rather than going out again at once.
        if (firsts.some((r) => !handled.has(r.id))) return false;
        if ((retries.length < LANE_PAGE && firsts.length < LANE_PAGE) || this.stopped) return true;
      }
    } finally {
      await this.recorded(recording);
      await coordination.releaseLease(claim, instanceId).catch(() => undefined);
    }
  }

  /**
   * A page of the channel's due retries, as their states are (the copies among the retries only
   * find them). A copy whose state is settled meanwhile (written by a process of an earlier
   * version, which keeps no copies) is removed instead of sent again.
   */
  private async dueRetries(channelId: number, due: () => Filter): Promise<AttemptState[]> {
    const { views } = this.platform;
    // (next_attempt_ms, position) orders a channel's attempts fully (one record per event per
    // channel) and is the order of the channel's index: with `id` as a third key, SQLite
    // preferred the next_attempt_ms index and read every channel's due retries for each page
    // (three times slower with 8,000 due).
    const ids = await findIds(views, this.retries, {
      filter: { channel_id: channelId, ...due() },
      sort: [['next_attempt_ms', 'asc'], ['position', 'asc']],
      limit: LANE_PAGE,
    });
    if (ids.length === 0) return [];
    const states = (await views.getMany(this.attempts, ids)) as unknown as AttemptState[];
    const pending = states.filter((state) => state.state === 'pending');
    const stillDue = new Set(pending.map((state) => state.id));
    const stale = ids.filter((id) => !stillDue.has(id));
    if (stale.length > 0) await views.commit(stale.map((id) => ({ op: 'delete' as const, collection: this.retries, id })));
    return pending;
  }

  /** Drops first attempts whose state is recorded (by this lane or another process) from `fresh`. */
  private forgetFresh(channelId: number, handled: Set<string>): void {
    const queue = this.fresh.get(channelId);
    if (!queue) return;
    const left = queue.records.filter((r) => !handled.has(r.id));
    this.freshCount -= queue.records.length - left.length;
    queue.records = left;
    if (left.length === 0 && !queue.more) this.fresh.delete(channelId);
  }

  /** Waits until the states handed over are committed (or refused: logged, the delivery stays pending). */
  private async recorded(recording: Promise<boolean>[]): Promise<void> {
    if (recording.length === 0) return;
    await this.writer.flush();
    await Promise.all(recording);
  }

  /**
   * Sends one attempt (or cancels it) and hands its new state to the writer. Resolves once the
   * send is over, so that the lane may go on, into the commit of the state: true once recorded,
   * or refused because another process recorded the attempt first; false when it stays pending
   * (cut off by a stop, or a failure, which is logged: it goes out again).
   */
  private attempt(before: AttemptState | null, state: AttemptState, record: DeliveryRecord | null): Promise<{ committed: Promise<boolean> }> {
    const logged = (error: unknown) => {
      if (error instanceof PreconditionFailedError) return true;
      this.platform.logger.warn({ err: error, delivery_id: state.id }, 'notification attempt failed unexpectedly; it stays pending');
      return false;
    };
    return this.claimed(before, state, record).then(
      (handed) => ({ committed: handed ? handed.committed.then(() => true, logged) : Promise.resolve(false) }),
      (error) => ({ committed: Promise.resolve(logged(error)) }),
    );
  }

  /** Answers the commit of the attempt's new state, or nothing when the attempt was cut off by a stop. */
  private async claimed(before: AttemptState | null, state: AttemptState, record: DeliveryRecord | null): Promise<{ committed: Promise<void> } | undefined> {
    const { logger } = this.platform;
    const id = state.id;
    const { state: channel } = await this.channels.load(channelStream(state.channel_id));
    if (!record || !channel || channel.deleted) return { committed: this.writer.record(before, cancelled(state, 'channel deleted', Date.now())) };
    if (!channel.enabled && record.type !== 'ping') return { committed: this.writer.record(before, cancelled(state, 'channel disabled', Date.now())) };

    const payload = await buildPayload(this.platform, record);
    const names = channel.kind === 'webhook' ? new Map<number, string>() : await endpointNames(this.platform, payload);
    const outcome = await this.senders.send({ deliveryId: id, channel, payload, endpointNames: names });
    if (this.stopped) return undefined;
    const next = afterAttempt(state, outcome, Date.now(), this.schedule);
    const committed = this.writer.record(before, next).then(() =>
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

/** A channel's first attempts in log order; `more`: records after `through` exist that are not queued. */
interface FreshQueue {
  records: DeliveryRecord[];
  /** Position of the last record queued (or read) for the channel. */
  through: number;
  more: boolean;
}

/** A record never attempted: pending since the reactor recorded it. */
function firstState(record: DeliveryRecord): AttemptState {
  const recordedMs = Date.parse(record.created_at);
  return pendingState(record.id, Number(record.channel_id), Number(record.position), recordedMs, record.created_at);
}

/** The find options that read the records after `scanned`: the last record read, or a checkpoint (every record after its position). */
function afterRecord(scanned: [position: number, id: string] | Position | null | undefined): { after?: [number, string]; filter?: Filter } {
  if (scanned === null || scanned === undefined) return {};
  return typeof scanned === 'number' ? { filter: { position: { gt: scanned } } } : { after: scanned };
}
