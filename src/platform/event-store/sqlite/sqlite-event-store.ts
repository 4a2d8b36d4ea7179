import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { resolve } from 'node:path';
import Database from 'better-sqlite3';
import {
  type AppendResult,
  type EventMetadata,
  idempotencyMetadata,
  type EventStore,
  type EventSubscription,
  type ExpectedRevision,
  type NewEvent,
  type Position,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  StoreUnavailableError,
  WrongExpectedRevisionError,
} from '../event-store.port.js';
import { RecentEvents } from './recent-events.js';
import { boundWal } from '../../sqlite-wal.js';

export interface SqliteEventStoreOptions {
  /** How often a waiting subscription looks for appends made by other processes. */
  pollIntervalMs?: number;
  /** How long a writer waits for another process's write lock before giving up. */
  busyTimeoutMs?: number;
  /** Events read per catch-up page by subscriptions. */
  subscriptionPageSize?: number;
  /** How many of the newest events stay parsed for this instance's live subscriptions. */
  recentEventsKept?: number;
}

/** The table every SQLite event log uses; shared with the benchmark's raw baseline. */
export const SQLITE_EVENTS_SCHEMA = `
  CREATE TABLE IF NOT EXISTS events (
    position       INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id       TEXT    NOT NULL,
    stream_id      TEXT    NOT NULL,
    revision       INTEGER NOT NULL,
    type           TEXT    NOT NULL,
    schema_version INTEGER NOT NULL,
    data           TEXT    NOT NULL,
    metadata       TEXT    NOT NULL,
    recorded_at    TEXT    NOT NULL,
    UNIQUE (stream_id, revision)
  )`;

/**
 * WAL with synchronous=NORMAL: a committed append survives a crash or SIGKILL of any process
 * (the WAL is written before the commit returns); only an OS crash or power loss can drop the
 * newest commits. FULL (SQLITE_SYNCHRONOUS=FULL) fsyncs every commit and caps appends near
 * the disk's fsync rate (about 300/s here), below what 1,000 endpoints at 1 s need.
 */
export function applySqliteEventLogPragmas(db: Database.Database, busyTimeoutMs: number): void {
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  // Before the first table is created, so a new file can give pages freed by retention back
  // (PRAGMA incremental_vacuum). A file created without it keeps auto_vacuum = NONE until an
  // operator runs VACUUM once (`npm run retention -- apply --vacuum`).
  db.pragma('auto_vacuum = INCREMENTAL');
  db.pragma('journal_mode = WAL');
  boundWal(db);
  db.pragma(`synchronous = ${process.env.SQLITE_SYNCHRONOUS === 'FULL' ? 'FULL' : 'NORMAL'}`);
}

interface EventRow {
  position: number;
  event_id: string;
  stream_id: string;
  revision: number;
  type: string;
  schema_version: number;
  data: string;
  metadata: string;
  recorded_at: string;
}

/**
 * Appends made through any instance in this process wake that file's subscriptions at once;
 * other processes' appends are found by polling.
 */
const appendSignals = new Map<string, { emitter: EventEmitter; users: number }>();

function acquireSignal(key: string): EventEmitter {
  let entry = appendSignals.get(key);
  if (!entry) {
    const emitter = new EventEmitter();
    emitter.setMaxListeners(0);
    entry = { emitter, users: 0 };
    appendSignals.set(key, entry);
  }
  entry.users += 1;
  return entry.emitter;
}

function releaseSignal(key: string): void {
  const entry = appendSignals.get(key);
  if (entry && --entry.users === 0) appendSignals.delete(key);
}

interface AppendedEvents {
  result: AppendResult;
  rows: EventRow[];
}

export class SqliteEventStore implements EventStore {
  private readonly db: Database.Database;
  private readonly signalKey: string;
  private readonly signal: EventEmitter;
  private readonly pollIntervalMs: number;
  private readonly pageSize: number;
  private readonly subscriptions = new Set<SqliteSubscription>();
  private closed = false;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly recent: RecentEvents;
  /** `PRAGMA data_version` when `recent` last reached the head: unchanged means no other connection has appended since. */
  private recentDataVersion: number | null = null;

  private readonly currentRevisionStmt: Database.Statement<[string], { revision: number | null }>;
  private readonly insertStmt: Database.Statement<unknown[]>;
  private readonly readAllStmt: Database.Statement<[number, number], EventRow>;
  private readonly headStmt: Database.Statement<[], { position: number | null }>;
  private readonly dataVersionStmt: Database.Statement<[], number>;
  private readonly appendTx: (streamId: string, events: NewEvent[], expected: ExpectedRevision) => AppendedEvents;

  constructor(filePath: string, options: SqliteEventStoreOptions = {}) {
    const inMemory = filePath === ':memory:';
    this.signalKey = inMemory ? `:memory:${randomUUID()}` : resolve(filePath);
    this.pollIntervalMs = options.pollIntervalMs ?? 75;
    this.pageSize = options.subscriptionPageSize ?? 500;
    this.recent = new RecentEvents(options.recentEventsKept ?? 2000);
    try {
      this.db = new Database(filePath);
      applySqliteEventLogPragmas(this.db, options.busyTimeoutMs ?? 5000);
      this.db.exec(SQLITE_EVENTS_SCHEMA);
    } catch (error) {
      throw new StoreUnavailableError(`Cannot open the event log at ${filePath}`, { cause: error });
    }
    this.signal = acquireSignal(this.signalKey);
    this.currentRevisionStmt = this.db.prepare('SELECT MAX(revision) AS revision FROM events WHERE stream_id = ?');
    this.insertStmt = this.db.prepare(
      `INSERT INTO events (event_id, stream_id, revision, type, schema_version, data, metadata, recorded_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.readAllStmt = this.db.prepare('SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?');
    this.headStmt = this.db.prepare('SELECT MAX(position) AS position FROM events');
    this.dataVersionStmt = this.db.prepare('PRAGMA data_version').pluck() as Database.Statement<[], number>;
    // IMMEDIATE takes the write lock before reading the current revision, so two processes can
    // never both pass the check; the busy timeout makes the second one wait instead of failing.
    this.appendTx = this.db.transaction(this.appendInTransaction.bind(this)).immediate;
  }

  async append(
    streamId: string,
    events: NewEvent[],
    options: { expectedRevision: ExpectedRevision },
  ): Promise<AppendResult> {
    this.assertOpen();
    if (events.length === 0) throw new Error('append needs at least one event');
    let appended: AppendedEvents;
    try {
      appended = this.appendTx(streamId, events, options.expectedRevision);
    } catch (error) {
      if (isSqliteCode(error, 'SQLITE_CONSTRAINT_UNIQUE') || isSqliteCode(error, 'SQLITE_CONSTRAINT_PRIMARYKEY')) {
        throw new WrongExpectedRevisionError(streamId, options.expectedRevision, null);
      }
      throw toStoreError(error);
    }
    this.rememberAppended(appended.rows);
    this.signal.emit('append', appended.result.position);
    return appended.result;
  }

  /**
   * Our own append joins the cached stretch when it directly follows it; otherwise (another
   * connection appended in between, or nobody is subscribed) the stretch is dropped.
   */
  private rememberAppended(rows: EventRow[]): void {
    const joins = this.subscriptions.size > 0 && this.recent.newest !== null && rows[0].position === this.recent.newest + 1;
    if (joins) this.recent.extend(this.recent.newest!, rows.map(toRecordedEvent));
    else this.recent.clear();
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    const backwards = options.direction === 'backwards';
    const from = options.fromRevision;
    const limit = options.maxCount;
    // No LIMIT clause unless asked: a bound LIMIT makes SQLite about four times slower on the
    // common read (a cached fold asking for what follows its revision, usually nothing).
    const sql = [
      'SELECT * FROM events WHERE stream_id = ?',
      from === undefined ? '' : backwards ? 'AND revision <= ?' : 'AND revision >= ?',
      backwards ? 'ORDER BY revision DESC' : 'ORDER BY revision ASC',
      limit === undefined ? '' : 'LIMIT ?',
    ].join(' ');
    const params = [streamId, ...(from === undefined ? [] : [from]), ...(limit === undefined ? [] : [limit])];
    return this.query(() => (this.statement(sql).all(...params) as EventRow[]).map(toRecordedEvent));
  }

  async readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    this.assertOpen();
    return this.query(() => this.readAllSync(options.after ?? null, options.maxCount));
  }

  subscribeToAll(options: { after?: Position | null }): EventSubscription {
    this.assertOpen();
    const subscription = new SqliteSubscription({
      after: options.after ?? null,
      pageSize: this.pageSize,
      pollIntervalMs: this.pollIntervalMs,
      signal: this.signal,
      readPage: (after, max) => this.readForSubscription(after ?? 0, max),
      onClose: (s) => this.subscriptions.delete(s),
    });
    this.subscriptions.add(subscription);
    return subscription;
  }

  async headPosition(): Promise<Position | null> {
    this.assertOpen();
    return this.query(() => this.headStmt.get()?.position ?? null);
  }

  async removeEvents(streamId: string, options: { throughRevision: number; types: string[] }): Promise<{ removed: number }> {
    this.assertOpen();
    if (options.types.length === 0) return { removed: 0 };
    const sql = `DELETE FROM events WHERE stream_id = ? AND revision <= ? AND type IN (${options.types.map(() => '?').join(', ')})`;
    const removed = this.query(() => this.statement(sql).run(streamId, options.throughRevision, ...options.types).changes);
    // Parsed copies of removed events must not be handed to a subscriber again.
    if (removed > 0) this.recent.clear();
    return { removed };
  }

  /** Returns the pages freed by removals to the file system (the file shrinks at the next checkpoint). */
  async reclaimSpace(): Promise<void> {
    this.assertOpen();
    this.query(() => {
      if (this.db.pragma('auto_vacuum', { simple: true }) === 2) this.db.pragma('incremental_vacuum');
      this.db.pragma('wal_checkpoint(TRUNCATE)');
    });
  }

  /** Rewrites the whole file once so that it can shrink from now on (auto_vacuum set on an old file). */
  vacuumOnce(): boolean {
    if (this.db.pragma('auto_vacuum', { simple: true }) === 2) return false;
    this.db.pragma('auto_vacuum = INCREMENTAL');
    this.db.exec('VACUUM');
    return true;
  }

  async ping(): Promise<void> {
    this.assertOpen();
    this.query(() => this.statement('SELECT 1').get());
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    releaseSignal(this.signalKey);
    this.db.close();
  }

  private appendInTransaction(streamId: string, events: NewEvent[], expected: ExpectedRevision): AppendedEvents {
    const current = this.currentRevisionStmt.get(streamId)?.revision ?? -1;
    if (!revisionMatches(expected, current)) throw new WrongExpectedRevisionError(streamId, expected, current);
    const recordedAt = new Date().toISOString();
    const rows: EventRow[] = [];
    let revision = current;
    for (const event of events) {
      revision += 1;
      const row: EventRow = {
        position: 0,
        event_id: randomUUID(),
        stream_id: streamId,
        revision,
        type: event.type,
        schema_version: event.schemaVersion ?? 1,
        data: JSON.stringify(event.data ?? null),
        metadata: JSON.stringify(storedMetadata(event.metadata, recordedAt)),
        recorded_at: recordedAt,
      };
      const info = this.insertStmt.run(row.event_id, streamId, revision, row.type, row.schema_version, row.data, row.metadata, recordedAt);
      row.position = Number(info.lastInsertRowid);
      rows.push(row);
    }
    return { result: { nextExpectedRevision: revision, position: rows[rows.length - 1].position }, rows };
  }

  private readAllSync(after: Position | null, maxCount: number): RecordedEvent[] {
    return this.readAllStmt.all(after ?? 0, maxCount).map(toRecordedEvent);
  }

  /**
   * Subscriptions read through the shared stretch of recent events. The log is queried only
   * when the stretch may be short: another connection committed since it last reached the head
   * (data_version moved), or the reader is outside it (catching up).
   */
  private readForSubscription(after: Position, max: number): RecordedEvent[] {
    const cached = this.recent.after(after, max);
    if (cached !== null && cached.length === max) return cached;
    const version = this.dataVersionStmt.get()!;
    if (cached !== null && version === this.recentDataVersion) return cached;
    const from = cached === null ? after : this.recent.newest!;
    const limit = Math.max(max, this.pageSize);
    const rows = this.readAllSync(from, limit);
    const reachedHead = rows.length < limit;
    // Rows after the stretch extend it; a reader outside it starts a new one once it reaches the head.
    if (cached !== null || reachedHead) {
      this.recent.extend(from, rows);
      if (reachedHead) this.recentDataVersion = version;
    }
    return (cached ?? []).concat(rows).slice(0, max);
  }

  private statement(sql: string): Database.Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  private query<T>(run: () => T): T {
    try {
      return run();
    } catch (error) {
      throw toStoreError(error);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreUnavailableError('The event store is closed');
  }
}

function revisionMatches(expected: ExpectedRevision, current: number): boolean {
  if (expected === 'any') return true;
  if (expected === 'no_stream') return current === -1;
  return expected === current;
}

function completeMetadata(input: Partial<EventMetadata> | undefined, now: string): EventMetadata {
  return {
    actor: input?.actor ?? null,
    request_id: input?.request_id ?? null,
    correlation_id: input?.correlation_id ?? null,
    causation_id: input?.causation_id ?? null,
    occurred_at: input?.occurred_at ?? now,
    ...idempotencyMetadata(input),
  };
}

/**
 * Metadata as stored: fields that are null are left out (checks are most of the log, and most of
 * their metadata is null), and put back as null on read by `readMetadata`.
 */
function storedMetadata(input: Partial<EventMetadata> | undefined, now: string): Partial<EventMetadata> {
  const complete = completeMetadata(input, now);
  return Object.fromEntries(Object.entries(complete).filter(([, value]) => value !== null)) as Partial<EventMetadata>;
}

function readMetadata(text: string): EventMetadata {
  const stored = JSON.parse(text) as Partial<EventMetadata>;
  return { actor: null, request_id: null, correlation_id: null, causation_id: null, ...stored } as EventMetadata;
}

function toRecordedEvent(row: EventRow): RecordedEvent {
  return {
    id: row.event_id,
    streamId: row.stream_id,
    type: row.type,
    schemaVersion: row.schema_version,
    data: JSON.parse(row.data) as unknown,
    metadata: readMetadata(row.metadata),
    revision: row.revision,
    position: row.position,
    recordedAt: row.recorded_at,
  };
}

function isSqliteCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}

/** Lock timeouts, I/O failures and a closed handle mean the log cannot be reached right now. */
function toStoreError(error: unknown): unknown {
  if (error instanceof WrongExpectedRevisionError || error instanceof StoreUnavailableError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const unavailable =
    (typeof code === 'string' && /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|READONLY)/.test(code)) ||
    (error instanceof TypeError && /database connection is not open/i.test(error.message));
  return unavailable ? new StoreUnavailableError('The event log is unavailable', { cause: error }) : error;
}

interface SubscriptionSource {
  after: Position | null;
  pageSize: number;
  pollIntervalMs: number;
  signal: EventEmitter;
  readPage(after: Position | null, maxCount: number): RecordedEvent[];
  onClose(subscription: SqliteSubscription): void;
}

/** Catches up page by page, then sleeps until an append signal, a poll tick or close(). */
class SqliteSubscription implements EventSubscription {
  private closed = false;
  /** An in-process append since the last page read: read again before sleeping. */
  private appendedSinceRead = false;
  private wake: (() => void) | null = null;
  private readonly onAppend = (): void => {
    this.appendedSinceRead = true;
    this.wake?.();
  };

  constructor(private readonly source: SubscriptionSource) {}

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.wake?.();
    this.source.onClose(this);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    let after = this.source.after;
    // Listening for the whole iteration: an append made while the consumer works on the page
    // must not wait for the next poll tick.
    this.source.signal.on('append', this.onAppend);
    try {
      while (!this.closed) {
        this.appendedSinceRead = false;
        const page = this.source.readPage(after, this.source.pageSize);
        for (const event of page) {
          if (this.closed) return;
          yield event;
          after = event.position;
        }
        if (page.length < this.source.pageSize && !this.closed && !this.appendedSinceRead) await this.waitForAppend();
      }
    } finally {
      this.source.signal.off('append', this.onAppend);
      await this.close();
    }
  }

  private waitForAppend(): Promise<void> {
    return new Promise<void>((done) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.wake = null;
        done();
      };
      const timer = setTimeout(finish, this.source.pollIntervalMs);
      this.wake = finish;
    });
  }
}

export function openSqliteEventStore(filePath: string, options?: SqliteEventStoreOptions): SqliteEventStore {
  return new SqliteEventStore(filePath, options);
}
