/**
 * Coordination store on one SQLite file that every process on the machine opens (WAL, busy
 * timeout). Each operation is a single statement or an IMMEDIATE transaction, so it is atomic
 * across processes.
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

interface IdempotencyRow {
  fingerprint: string;
  state: 'in_progress' | 'completed';
  claimed_at: number;
  expires_at: number;
  response: string | null;
}

export class SqliteCoordinationStore implements CoordinationStore {
  private readonly db: Database.Database;
  private readonly stmt: ReturnType<SqliteCoordinationStore['prepareStatements']>;
  private lastCleanup = 0;

  constructor(file: string, options: { busyTimeoutMs?: number } = {}) {
    this.db = new Database(file);
    this.db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    this.db.pragma('journal_mode = WAL');
    boundWal(this.db);
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(SCHEMA);
    this.stmt = this.prepareStatements();
  }

  private prepareStatements() {
    const db = this.db;
    return {
      acquireLease: db.prepare(`
        INSERT INTO leases (name, owner, expires_at) VALUES (@name, @owner, @expiresAt)
        ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
        WHERE leases.owner = excluded.owner OR leases.expires_at <= @now
        RETURNING name, owner, expires_at AS expiresAt`),
      releaseLease: db.prepare(`DELETE FROM leases WHERE name = ? AND owner = ?`),
      listLeases: db.prepare(`SELECT name, owner, expires_at AS expiresAt FROM leases WHERE expires_at > ? ORDER BY name`),
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
      readClaim: db.prepare(`SELECT fingerprint, state, claimed_at, expires_at, response FROM idempotency WHERE key = ?`),
      writeClaim: db.prepare(`
        INSERT OR REPLACE INTO idempotency (key, fingerprint, state, claimed_at, expires_at, response)
        VALUES (?, ?, 'in_progress', ?, ?, NULL)`),
      takeOver: db.prepare(`UPDATE idempotency SET claimed_at = ? WHERE key = ?`),
      complete: db.prepare(`UPDATE idempotency SET state = 'completed', response = ? WHERE key = ? AND state = 'in_progress'`),
      release: db.prepare(`DELETE FROM idempotency WHERE key = ? AND state = 'in_progress'`),
    };
  }

  async acquireLease(name: string, owner: string, ttlMs: number, now = Date.now()): Promise<LeaseGrant | null> {
    const row = this.stmt.acquireLease.get({ name, owner, expiresAt: now + ttlMs, now }) as LeaseGrant | undefined;
    return row ?? null;
  }

  /** One IMMEDIATE transaction for all names; a name held elsewhere changes no page, so costs no write. */
  async acquireLeases(names: string[], owner: string, ttlMs: number, now = Date.now()): Promise<LeaseGrant[]> {
    if (names.length === 0) return [];
    return this.db
      .transaction(() =>
        names.flatMap((name) => (this.stmt.acquireLease.get({ name, owner, expiresAt: now + ttlMs, now }) as LeaseGrant | undefined) ?? []),
      )
      .immediate();
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    this.stmt.releaseLease.run(name, owner);
  }

  async listLeases(now = Date.now()): Promise<LeaseGrant[]> {
    return this.stmt.listLeases.all(now) as LeaseGrant[];
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
    options: { retentionMs: number; staleAfterMs: number; now?: number },
  ): Promise<IdempotencyClaim> {
    const now = options.now ?? Date.now();
    const claim = this.db
      .transaction((): IdempotencyClaim => {
        const row = this.stmt.readClaim.get(key) as IdempotencyRow | undefined;
        if (!row || row.expires_at <= now) {
          this.stmt.writeClaim.run(key, fingerprint, now, now + options.retentionMs);
          return { outcome: 'claimed' };
        }
        if (row.fingerprint !== fingerprint) return { outcome: 'fingerprint_mismatch' };
        if (row.state === 'completed') return { outcome: 'completed', response: JSON.parse(row.response!) as StoredResponse };
        if (row.claimed_at + options.staleAfterMs <= now) {
          this.stmt.takeOver.run(now, key);
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
    if (this.db.open) this.db.close();
  }

  private cleanupOccasionally(now: number): void {
    if (Math.abs(now - this.lastCleanup) < CLEANUP_EVERY_MS) return;
    this.lastCleanup = now;
    this.stmt.purgeRateWindows.run(now);
    this.stmt.purgeIdempotency.run(now);
  }
}
