/**
 * Small pieces of shared state that several processes must agree on: leases (who owns a
 * projection or a schedule shard), rate-limit counters, and idempotency-key records.
 * Adapters: SQLite (same file for every process on the machine), MongoDB.
 * Contract suite: test/contract/coordination-store.contract.ts.
 */
import type { MonotonicClock } from './lease-observation.js';

export interface LeaseGrant {
  name: string;
  owner: string;
  /**
   * Fencing token: increases every time the lease changes hands (a renewal keeps it). A write
   * made under the lease may carry it so that the store refuses a holder that lost the lease.
   */
  epoch: number;
  /**
   * When the grant ends as its holder must count it, on this process's monotonic clock
   * (`monotonicNow()` of lease-observation.ts): measured from before the request was sent, so
   * it always ends before any other process may take the lease over.
   */
  validUntil: number;
  /** This call took the lease (free, or its holder stopped renewing); false for a renewal. */
  acquired: boolean;
}

/** A lease as stored: who holds it (operators' status). */
export interface LeaseRecord {
  name: string;
  owner: string;
  epoch: number;
  /** Renewals by this holder so far; a taker watches it change (see lease-observation.ts). */
  renewals: number;
  ttlMs: number;
  /** The holder's wall-clock time of its last renewal: shown to operators, never compared. */
  renewedAt: number;
}

/** Options every adapter takes (tests inject the clock; the platform counts acquisitions). */
export interface LeaseOptions {
  /** This process's monotonic clock (default `monotonicNow`). */
  clock?: MonotonicClock;
  /** Called once for every lease this process takes and did not hold (`monitor_lease_acquisitions_total`). */
  onLeaseAcquired?: (grant: LeaseGrant) => void;
}

export interface RateWindow {
  /** Hits in the current fixed window, this one included. */
  count: number;
  /** Epoch ms when the window resets. */
  resetAt: number;
}

export interface QuotaGrant {
  /** Units granted now: `want`, fewer near the limit, 0 once the window's quota is spent. */
  granted: number;
  /** Units granted in the current window so far (every holder's), this grant included. */
  count: number;
  /** Epoch ms when the window resets. */
  resetAt: number;
}

export interface StoredResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export type IdempotencyClaim =
  /** The caller owns the key now and must `completeIdempotency` or `releaseIdempotency`. */
  | { outcome: 'claimed' }
  /** Another request with this key and fingerprint is running. */
  | { outcome: 'in_progress' }
  /** A finished request with this key and fingerprint: replay it. */
  | { outcome: 'completed'; response: StoredResponse }
  /** The key was used with another fingerprint. */
  | { outcome: 'fingerprint_mismatch' };

export interface CoordinationStore {
  /**
   * Takes the lease if free, or if its holder stopped renewing: its record has not changed for
   * its period as measured on this process's own monotonic clock since this process last saw it
   * change (lease-observation.ts); renews it if `owner` holds it. Null when another owner holds
   * it. No wall clock is compared with another process's.
   */
  acquireLease(name: string, owner: string, ttlMs: number): Promise<LeaseGrant | null>;
  /**
   * `acquireLease` for every name at once, as one write where the store allows it (a process
   * keeps all its leases with one renewal; see lease-keeper.ts). Returns the grants obtained, in
   * any order; names another owner holds are left out.
   */
  acquireLeases(names: string[], owner: string, ttlMs: number): Promise<LeaseGrant[]>;
  /** Frees the lease if `owner` holds it; its epoch is kept, so the next grant's is higher. */
  releaseLease(name: string, owner: string): Promise<void>;
  /** Every lease held now (free ones left out), by name. */
  listLeases(): Promise<LeaseRecord[]>;
  /**
   * Deletes the leases named `prefix...` that are free, or whose holder last renewed them before
   * `renewedBefore` (epoch ms, the holder's own wall clock); returns how many went. Only for
   * leases each process names for itself (prober announcements): nobody takes them over, so
   * their epoch fences nothing, and a row removed under a holder that still runs (its clock far
   * behind) comes back with its next renewal.
   */
  removeLeases(prefix: string, renewedBefore: number): Promise<number>;
  /** Counts one hit in the fixed window `[floor(now/windowMs)*windowMs, +windowMs)`. Atomic across processes. */
  hit(key: string, windowMs: number, now?: number): Promise<RateWindow>;
  /**
   * Takes up to `want` units of the `limit` a fixed window allows (same windows as `hit`), so a
   * process can spend them locally. Atomic across processes: the window's count never exceeds `limit`.
   */
  takeQuota(key: string, windowMs: number, want: number, limit: number, now?: number): Promise<QuotaGrant>;
  /**
   * Atomically claims `key` for `fingerprint`. A record older than `retentionMs` is treated as absent.
   * A claim still `in_progress` after `staleAfterMs` (its owner died) may be taken over, and so may
   * one whose `owner` (the claiming process's instance id) the store can show is gone: the SQLite
   * store by its owner lock, also freeing such claims when it opens after a crash. MongoDB has no
   * such proof and waits out `staleAfterMs`.
   */
  claimIdempotency(
    key: string,
    fingerprint: string,
    options: { retentionMs: number; staleAfterMs: number; owner?: string; now?: number },
  ): Promise<IdempotencyClaim>;
  completeIdempotency(key: string, response: StoredResponse): Promise<void>;
  /** Forgets an unfinished claim (the request failed with 5xx) so the client may retry. */
  releaseIdempotency(key: string): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
