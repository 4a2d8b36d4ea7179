/**
 * Every lease one process wants (projections, scheduler shards, the automatic-incident reactor...)
 * kept with ONE coordination write per renewal period, whatever their number, so an idle
 * service writes next to nothing (test/e2e/idle-writes.e2e.test.ts):
 * - `want(...names)` registers names; names new to the keeper are tried at once, and first calls
 *   made in the same event-loop turn share one write;
 * - every `renewEveryMs` one `acquireLeases` call renews the leases held and retries the others
 *   (a lease held elsewhere changes nothing in the store, so standby costs no write);
 * - `holds(name)` answers from memory: held while the last grant has more than a safety margin
 *   left on this process's monotonic clock, so a process whose renewals fail stops acting
 *   before another may take over (another process waits out a whole period of unchanged
 *   renewals on its own clock: lease-observation.ts);
 * - `epoch(name)` is the grant's fencing token.
 * Store operations run one at a time, in order, so a renewal never re-takes a lease released
 * while it was in flight.
 *
 * Failover: a crashed process's leases are taken over within `ttlMs + renewEveryMs` of another
 * process first seeing them (at once on one machine, where its owner lock shows it is gone).
 */
import type { Logger } from '../logging/logger.js';
import type { CoordinationStore } from './coordination.port.js';
import { monotonicNow, type MonotonicClock } from './lease-observation.js';

export const LEASE_TTL_MS = 15_000;

export interface LeaseKeeperOptions {
  ttlMs?: number;
  /** Default: a third of the TTL, so two renewals can fail before a lease lapses. */
  renewEveryMs?: number;
  logger?: Logger;
  /** The store's monotonic clock (grants' `validUntil` are on it). */
  clock?: MonotonicClock;
}

export class LeaseKeeper {
  private readonly ttlMs: number;
  private readonly renewEveryMs: number;
  private readonly marginMs: number;
  private readonly wanted = new Set<string>();
  /** Lease name -> the current grant's end (monotonic ms) and epoch, for leases this process holds. */
  private readonly grants = new Map<string, { validUntil: number; epoch: number }>();
  private readonly clock: MonotonicClock;
  private timer: NodeJS.Timeout | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private firstTries: { names: Set<string>; done: Promise<void> } | null = null;
  private closed = false;

  constructor(
    private readonly coordination: CoordinationStore,
    readonly owner: string,
    private readonly options: LeaseKeeperOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? LEASE_TTL_MS;
    this.renewEveryMs = options.renewEveryMs ?? Math.max(1, Math.floor(this.ttlMs / 3));
    this.marginMs = Math.min(1_000, this.ttlMs / 10);
    this.clock = options.clock ?? monotonicNow;
  }

  /** Registers the names; resolves once every name new to the keeper has been tried. */
  async want(...names: string[]): Promise<void> {
    if (this.closed) return;
    const fresh = names.filter((name) => !this.wanted.has(name));
    if (fresh.length === 0) return;
    for (const name of fresh) this.wanted.add(name);
    this.startTimer();
    await this.tryFirst(fresh);
  }

  /** `want(name)`, then whether this process holds it. */
  async hold(name: string): Promise<boolean> {
    await this.want(name);
    return this.holds(name);
  }

  holds(name: string, now = this.clock()): boolean {
    const grant = this.grants.get(name);
    return grant !== undefined && grant.validUntil - now > this.marginMs;
  }

  /** The fencing token of the lease this process holds, or null. */
  epoch(name: string): number | null {
    return this.holds(name) ? this.grants.get(name)!.epoch : null;
  }

  /** Stops wanting the lease and frees it for other processes. */
  async release(name: string): Promise<void> {
    const wasWanted = this.wanted.delete(name);
    this.grants.delete(name);
    // Also when not held: a write in flight may be taking it right now (the release runs after it).
    if (wasWanted) await this.serially(() => this.coordination.releaseLease(name, this.owner));
  }

  /** Stops renewing and releases every lease held. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.allSettled([...this.wanted].map((name) => this.release(name)));
  }

  /** One write renewing (or retrying) every wanted lease; runs every `renewEveryMs`. */
  async renew(): Promise<void> {
    await this.serially(() => this.acquire([...this.wanted]));
  }

  private startTimer(): void {
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => {
      this.renew().catch((error) => this.options.logger?.warn({ err: error }, 'lease renewal failed'));
    }, this.renewEveryMs);
    this.timer.unref();
  }

  /** First tries of one event-loop turn share one write. */
  private tryFirst(names: string[]): Promise<void> {
    if (!this.firstTries) {
      const batch = { names: new Set<string>(), done: Promise.resolve() };
      batch.done = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        this.firstTries = null;
        return this.serially(() => this.acquire([...batch.names]));
      });
      this.firstTries = batch;
    }
    for (const name of names) this.firstTries.names.add(name);
    return this.firstTries.done;
  }

  private async acquire(names: string[]): Promise<void> {
    const current = names.filter((name) => this.wanted.has(name));
    if (current.length === 0) return;
    const grants = await this.coordination.acquireLeases(current, this.owner, this.ttlMs);
    const granted = new Map(grants.map((grant) => [grant.name, grant]));
    for (const name of current) {
      if (!this.wanted.has(name)) continue; // released while the write was in flight: the release runs next
      const grant = granted.get(name);
      if (grant === undefined) this.grants.delete(name);
      else this.grants.set(name, { validUntil: grant.validUntil, epoch: grant.epoch });
    }
  }

  private serially<T>(operation: () => Promise<T>): Promise<T> {
    const result = this.queue.then(operation, operation);
    this.queue = result.catch(() => undefined);
    return result;
  }
}
