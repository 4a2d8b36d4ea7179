/**
 * Small pieces of shared state that several processes must agree on: leases (who owns a
 * projection or a schedule shard), rate-limit counters, and idempotency-key records.
 * Adapters: SQLite (same file for every process on the machine), MongoDB.
 * Contract suite: test/contract/coordination-store.contract.ts.
 */

export interface LeaseGrant {
  name: string;
  owner: string;
  /** Epoch ms when the lease lapses unless renewed. */
  expiresAt: number;
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
  /** Takes the lease if free or lapsed, renews it if `owner` holds it; null when another owner holds it. */
  acquireLease(name: string, owner: string, ttlMs: number, now?: number): Promise<LeaseGrant | null>;
  /**
   * `acquireLease` for every name at once, as one write where the store allows it (a process
   * keeps all its leases with one renewal; see lease-keeper.ts). Returns the grants obtained, in
   * any order; names another owner holds are left out.
   */
  acquireLeases(names: string[], owner: string, ttlMs: number, now?: number): Promise<LeaseGrant[]>;
  releaseLease(name: string, owner: string): Promise<void>;
  /** Every lease not yet lapsed at `now`: who holds what (operators' status, dead-owner takeover). */
  listLeases(now?: number): Promise<LeaseGrant[]>;
  /** Counts one hit in the fixed window `[floor(now/windowMs)*windowMs, +windowMs)`. Atomic across processes. */
  hit(key: string, windowMs: number, now?: number): Promise<RateWindow>;
  /**
   * Takes up to `want` units of the `limit` a fixed window allows (same windows as `hit`), so a
   * process can spend them locally. Atomic across processes: the window's count never exceeds `limit`.
   */
  takeQuota(key: string, windowMs: number, want: number, limit: number, now?: number): Promise<QuotaGrant>;
  /**
   * Atomically claims `key` for `fingerprint`. A record older than `retentionMs` is treated as absent.
   * A claim still `in_progress` after `staleAfterMs` (its owner died) may be taken over.
   */
  claimIdempotency(
    key: string,
    fingerprint: string,
    options: { retentionMs: number; staleAfterMs: number; now?: number },
  ): Promise<IdempotencyClaim>;
  completeIdempotency(key: string, response: StoredResponse): Promise<void>;
  /** Forgets an unfinished claim (the request failed with 5xx) so the client may retry. */
  releaseIdempotency(key: string): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
