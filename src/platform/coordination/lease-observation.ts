/**
 * The takeover rule every coordination store applies (Kubernetes leader election's
 * `observedTime`): a lease held by another owner is taken over only once its record (holder,
 * epoch, renewal count) has stayed the same for the lease's period as measured on THIS
 * process's monotonic clock since this process last saw it change. No decision compares this
 * process's clock with a time another process wrote: a taker whose clock runs ahead (or
 * behind, or jumps) waits exactly as long as one whose clock is right, and only the rate of its
 * clock matters.
 *
 * The holder is safe from the other side: it counts its grant from before its renewal was sent,
 * on its own clock, and stops acting a margin before that runs out (LeaseKeeper.holds), while a
 * taker starts counting only once it has read the renewed record, i.e. later.
 */
import { performance } from 'node:perf_hooks';

/** Milliseconds on this process's monotonic clock (never steps with NTP or a wall-clock change). */
export type MonotonicClock = () => number;

export const monotonicNow: MonotonicClock = () => performance.now();

/** What a taker sees of a lease held by someone else. */
export interface LeaseRecordSeen {
  owner: string;
  epoch: number;
  renewals: number;
  ttlMs: number;
}

/** Entries not looked at for this long are forgotten (their lease was freed, or nobody asks any more). */
const FORGET_AFTER_MS = 10 * 60_000;

/** One per store instance: when this process last saw each lease record change. */
export class LeaseObservations {
  private readonly seen = new Map<string, { key: string; since: number; lookedAt: number }>();
  private lastSweep = 0;

  constructor(private readonly clock: MonotonicClock = monotonicNow) {}

  now(): number {
    return this.clock();
  }

  /**
   * Notes the record as seen now; true when it has not changed for its period since this process
   * first saw it as it is (the holder stopped renewing: it may be taken over).
   */
  stale(name: string, record: LeaseRecordSeen): boolean {
    const now = this.clock();
    this.sweep(now);
    const key = `${record.owner}\u0000${record.epoch}\u0000${record.renewals}`;
    const previous = this.seen.get(name);
    if (!previous || previous.key !== key) {
      this.seen.set(name, { key, since: now, lookedAt: now });
      return false;
    }
    previous.lookedAt = now;
    return now - previous.since >= record.ttlMs;
  }

  /** The lease was freed, taken or renewed by this process: nothing to remember. */
  forget(name: string): void {
    this.seen.delete(name);
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < FORGET_AFTER_MS) return;
    this.lastSweep = now;
    for (const [name, entry] of this.seen) if (now - entry.lookedAt > FORGET_AFTER_MS) this.seen.delete(name);
  }
}
