/**
 * Coordination store on one SQLite file that every process on the machine opens (WAL, busy
 * timeout). Each operation is a single statement or an IMMEDIATE transaction, so it is atomic
 * across processes.
 *
 * Leases: a row per name (owner '' when free, kept so its epoch only grows). A holder renews by
 * bumping `renewals`; another process takes the lease over when the row has not changed for its
 * period on the taker's own monotonic clock (lease-observation.ts), or at once when the holder's
 * owner lock shows its process is gone (owner-locks.ts). `expires_at` is the holder's own
 * estimate, written for operators and earlier versions, never read for a decision.
 */
import Database from 'better-sqlite3';
import type {
  CoordinationStore,
  IdempotencyClaim,
  LeaseGrant,
  QuotaGrant,
  RateWindow,
  StoredResponse,
} from '../coordination.port.js';
import { boundWal } from '../../sqlite-wal.js';
import type { LeaseOptions, LeaseRecord } from '../coordination.port.js';
import { LeaseObservations, monotonicNow } from '../lease-observation.js';
import { OwnerLocks } from './owner-locks.js';

/** Expired rate windows and idempotency records are purged at most this often per process. */
const CLEANUP_EVERY_MS = 60_000;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS leases (
    name TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS rate_windows (
    key TEXT NOT NULL, window_start INTEGER NOT NULL, count INTEGER NOT NULL, reset_at INTEGER NOT NULL,
    PRIMARY KEY (key, window_start));
  CREATE INDEX IF NOT EXISTS rate_windows_reset_at ON rate_windows (reset_at);
  CREATE TABLE IF NOT EXISTS idempotency (
    key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, state TEXT NOT NULL,
    claimed_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, response TEXT);
  CREATE INDEX IF NOT EXISTS idempotency_expires_at ON idempotency (expires_at);
`;

/** Column added to the idempotency table of earlier versions: the claiming process ('' unknown). */
const CLAIM_OWNER_COLUMN = `ALTER TABLE idempotency ADD COLUMN owner TEXT NOT NULL DEFAULT ''`;

/** Columns added to the leases table of earlier versions (name, owner, expires_at). */
const LEASE_COLUMNS: Array<[string, string]> = [
  ['epoch', 'INTEGER NOT NULL DEFAULT 0'],
  ['renewals', 'INTEGER NOT NULL DEFAULT 0'],
  ['ttl_ms', 'INTEGER NOT NULL DEFAULT 15000'],
  ['renewed_at', 'INTEGER NOT NULL DEFAULT 0'],
];

interface LeaseRow {
  name: string;
  owner: string;
  epoch: number;
  renewals: number;
  ttl_ms: number;
}

interface IdempotencyRow {
  fingerprint: string;
  state: 'in_progress' | 'completed';
  owner: string;
  claimed_at: number;
  expires_at: number;
  response: string | null;
}

export class SqliteCoordinationStore implements CoordinationStore {
  private readonly db: Database.Database;
  private readonly stmt: ReturnType<SqliteCoordinationStore['prepareStatements']>;
  private lastCleanup = 0;
  private readonly observations: LeaseObservations;
  private readonly ownerLocks: OwnerLocks;

  constructor(
    file: string,
    private readonly options: { busyTimeoutMs?: number } & LeaseOptions = {},
  ) {
    this.observations = new LeaseObservations(options.clock ?? monotonicNow);
    this.ownerLocks = new OwnerLocks(`${file}-owners`);
    this.db = new Database(file);
    this.db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    this.db.pragma('journal_mode = WAL');
    boundWal(this.db);
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(SCHEMA);
    const columns = new Set((this.db.prepare('PRAGMA table_info(leases)').all() as Array<{ name: string }>).map((c) => c.name));
    for (const [column, type] of LEASE_COLUMNS) if (!columns.has(column)) this.db.exec(`ALTER TABLE leases ADD COLUMN ${column} ${type}`);
    const claimColumns = (this.db.prepare('PRAGMA table_info(idempotency)').all() as Array<{ name: string }>).map((c) => c.name);
    if (!claimColumns.includes('owner')) this.db.exec(CLAIM_OWNER_COLUMN);
    this.stmt = this.prepareStatements();
    this.freeLeasesOfDeadOwners();
  }

  private prepareStatements() {
    const db = this.db;
    return {
      readLease: db.prepare(`SELECT name, owner, epoch, renewals, ttl_ms FROM leases WHERE name = ?`),
      insertLease: db.prepare(`
        INSERT INTO leases (name, owner, expires_at, epoch, renewals, ttl_ms, renewed_at)
        VALUES (@name, @owner, @wall + @ttlMs, 1, 0, @ttlMs, @wall)`),
      renewLease: db.prepare(`
        UPDATE leases SET renewals = renewals + 1, ttl_ms = @ttlMs, renewed_at = @wall, expires_at = @wall + @ttlMs
        WHERE name = @name AND owner = @owner`),
      takeLease: db.prepare(`
        UPDATE leases SET owner = @owner, epoch = epoch + 1, renewals = 0, ttl_ms = @ttlMs, renewed_at = @wall, expires_at = @wall + @ttlMs
        WHERE name = @name AND owner = @holder AND epoch = @epoch AND renewals = @renewals`),
      releaseLease: db.prepare(`UPDATE leases SET owner = '', expires_at = 0 WHERE name = ? AND owner = ?`),
      freeLeasesOf: db.prepare(`UPDATE leases SET owner = '', expires_at = 0 WHERE owner = ?`),
      removeLeases: db.prepare(`
        DELETE FROM leases WHERE substr(name, 1, length(@prefix)) = @prefix AND (owner = '' OR renewed_at < @renewedBefore)`),
      listLeases: db.prepare(`
        SELECT name, owner, epoch, renewals, ttl_ms AS ttlMs, renewed_at AS renewedAt FROM leases WHERE owner <> '' ORDER BY name`),
      hit: db.prepare(`
        INSERT INTO rate_windows (key, window_start, count, reset_at) VALUES (?, ?, 1, ?)
        ON CONFLICT (key, window_start) DO UPDATE SET count = count + 1
        RETURNING count, reset_at AS resetAt`),
      readWindow: db.prepare(`SELECT count FROM rate_windows WHERE key = ? AND window_start = ?`),
      addToWindow: db.prepare(`
        INSERT INTO rate_windows (key, window_start, count, reset_at) VALUES (?, ?, ?, ?)
        ON CONFLICT (key, window_start) DO UPDATE SET count = count + excluded.count`),
      purgeRateWindows: db.prepare(`DELETE FROM rate_windows WHERE reset_at <= ?`),
      purgeIdempotency: db.prepare(`DELETE FROM idempotency WHERE expires_at <= ?`),
      readClaim: db.prepare(`SELECT fingerprint, state, owner, claimed_at, expires_at, response FROM idempotency WHERE key = ?`),
      writeClaim: db.prepare(`
        INSERT OR REPLACE INTO idempotency (key, fingerprint, state, owner, claimed_at, expires_at, response)
        VALUES (?, ?, 'in_progress', ?, ?, ?, NULL)`),
      takeOver: db.prepare(`UPDATE idempotency SET claimed_at = ?, owner = ? WHERE key = ?`),
      releaseClaimsOf: db.prepare(`DELETE FROM idempotency WHERE owner = ? AND state = 'in_progress'`),
      complete: db.prepare(`UPDATE idempotency SET state = 'completed', response = ? WHERE key = ? AND state = 'in_progress'`),
      release: db.prepare(`DELETE FROM idempotency WHERE key = ? AND state = 'in_progress'`),
    };
  }

  async acquireLease(name: string, owner: string, ttlMs: number): Promise<LeaseGrant | null> {
    return (await this.acquireLeases([name], owner, ttlMs))[0] ?? null;
  }

  /** One IMMEDIATE transaction for all names; a name held elsewhere changes no page, so costs no write. */
  async acquireLeases(names: string[], owner: string, ttlMs: number): Promise<LeaseGrant[]> {
    if (names.length === 0) return [];
    this.ownerLocks.hold(owner);
    const validUntil = this.observations.now() + ttlMs; // counted from before the write
    const wall = Date.now();
    const dead = new Map<string, boolean>();
    const isDead = (holder: string) => {
      if (!dead.has(holder)) dead.set(holder, this.ownerLocks.isDead(holder));
      return dead.get(holder)!;
    };
    const grants = this.db
      .transaction(() => names.flatMap((name) => this.acquireOne(name, owner, ttlMs, wall, validUntil, isDead) ?? []))
      .immediate();
    for (const grant of grants) if (grant.acquired) this.options.onLeaseAcquired?.(grant);
    return grants;
  }

  private acquireOne(name: string, owner: string, ttlMs: number, wall: number, validUntil: number, isDead: (holder: string) => boolean): LeaseGrant | null {
    const params = { name, owner, ttlMs, wall };
    const row = this.stmt.readLease.get(name) as LeaseRow | undefined;
    if (!row) {
      this.stmt.insertLease.run(params);
      return { name, owner, epoch: 1, validUntil, acquired: true };
    }
    if (row.owner === owner) {
      this.stmt.renewLease.run(params);
      this.observations.forget(name);
      return { name, owner, epoch: row.epoch, validUntil, acquired: false };
    }
    const free = row.owner === '';
    if (!free && !this.observations.stale(name, { owner: row.owner, epoch: row.epoch, renewals: row.renewals, ttlMs: row.ttl_ms }) && !isDead(row.owner)) {
      return null;
    }
    const taken = this.stmt.takeLease.run({ ...params, holder: row.owner, epoch: row.epoch, renewals: row.renewals });
    this.observations.forget(name);
    return taken.changes === 1 ? { name, owner, epoch: row.epoch + 1, validUntil, acquired: true } : null;
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    this.stmt.releaseLease.run(name, owner);
  }

  async listLeases(): Promise<LeaseRecord[]> {
    return this.stmt.listLeases.all() as LeaseRecord[];
  }

  async removeLeases(prefix: string, renewedBefore: number): Promise<number> {
    return this.stmt.removeLeases.run({ prefix, renewedBefore }).changes;
  }

  /**
   * Frees at once the leases and the unfinished Idempotency-Key claims of owners whose process is
   * gone (their owner lock is free): a retry of such a key runs again at once, and the log makes
   * it finish what the dead attempt began (platform/es/stream-command.ts).
   */
  private freeLeasesOfDeadOwners(): void {
    for (const owner of this.ownerLocks.deadOwners()) {
      this.stmt.freeLeasesOf.run(owner);
      this.stmt.releaseClaimsOf.run(owner);
      this.ownerLocks.forget(owner);
    }
  }

  async hit(key: string, windowMs: number, now = Date.now()): Promise<RateWindow> {
    const windowStart = Math.floor(now / windowMs) * windowMs;
    const row = this.stmt.hit.get(key, windowStart, windowStart + windowMs) as RateWindow;
    this.cleanupOccasionally(now);
    return { count: row.count, resetAt: row.resetAt };
  }

  async takeQuota(key: string, windowMs: number, want: number, limit: number, now = Date.now()): Promise<QuotaGrant> {
    const windowStart = Math.floor(now / windowMs) * windowMs;
    const resetAt = windowStart + windowMs;
    const grant = this.db
      .transaction((): QuotaGrant => {
        const row = this.stmt.readWindow.get(key, windowStart) as { count: number } | undefined;
        const used = row?.count ?? 0;
        const granted = Math.max(0, Math.min(want, limit - used));
        if (granted > 0) this.stmt.addToWindow.run(key, windowStart, granted, resetAt);
        return { granted, count: used + granted, resetAt };
      })
      .immediate();
    this.cleanupOccasionally(now);
    return grant;
  }

  async claimIdempotency(
    key: string,
    fingerprint: string,
    options: { retentionMs: number; staleAfterMs: number; owner?: string; now?: number },
  ): Promise<IdempotencyClaim> {
    const now = options.now ?? Date.now();
    const owner = options.owner ?? '';
    if (owner) this.ownerLocks.hold(owner);
    const claim = this.db
      .transaction((): IdempotencyClaim => {
        const row = this.stmt.readClaim.get(key) as IdempotencyRow | undefined;
        if (!row || row.expires_at <= now) {
          this.stmt.writeClaim.run(key, fingerprint, owner, now, now + options.retentionMs);
          return { outcome: 'claimed' };
        }
        if (row.fingerprint !== fingerprint) return { outcome: 'fingerprint_mismatch' };
        if (row.state === 'completed') return { outcome: 'completed', response: JSON.parse(row.response!) as StoredResponse };
        // Its owner's process is gone (owner lock free): nothing runs it any more.
        const ownerGone = row.owner !== '' && row.owner !== owner && this.ownerLocks.isDead(row.owner);
        if (row.claimed_at + options.staleAfterMs <= now || ownerGone) {
          this.stmt.takeOver.run(now, owner, key);
          return { outcome: 'claimed' };
        }
        return { outcome: 'in_progress' };
      })
      .immediate();
    this.cleanupOccasionally(now);
    return claim;
  }

  async completeIdempotency(key: string, response: StoredResponse): Promise<void> {
    this.stmt.complete.run(JSON.stringify(response), key);
  }

  async releaseIdempotency(key: string): Promise<void> {
    this.stmt.release.run(key);
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    this.ownerLocks.close();
    if (this.db.open) this.db.close();
  }

  private cleanupOccasionally(now: number): void {
    if (Math.abs(now - this.lastCleanup) < CLEANUP_EVERY_MS) return;
    this.lastCleanup = now;
    this.stmt.purgeRateWindows.run(now);
    this.stmt.purgeIdempotency.run(now);
  }
}
