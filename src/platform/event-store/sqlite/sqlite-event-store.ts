import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { resolve } from 'node:path';
import Database from 'better-sqlite3';
import {
  type AppendResult,
  type EventMetadata,
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

export interface SqliteEventStoreOptions {
  /** How often a waiting subscription looks for appends made by other processes. */
  pollIntervalMs?: number;
  /** How long a writer waits for another process's write lock before giving up. */
  busyTimeoutMs?: number;
  /** Events read per catch-up page by subscriptions. */
  subscriptionPageSize?: number;
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
  db.pragma('journal_mode = WAL');
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

const NO_LIMIT = -1;

export class SqliteEventStore implements EventStore {
  private readonly db: Database.Database;
  private readonly signalKey: string;
  private readonly signal: EventEmitter;
  private readonly pollIntervalMs: number;
  private readonly pageSize: number;
  private readonly subscriptions = new Set<SqliteSubscription>();
  private closed = false;
  private readonly statements = new Map<string, Database.Statement>();

  private readonly currentRevisionStmt: Database.Statement<[string], { revision: number | null }>;
  private readonly insertStmt: Database.Statement<unknown[]>;
  private readonly readAllStmt: Database.Statement<[number, number], EventRow>;
  private readonly headStmt: Database.Statement<[], { position: number | null }>;
  private readonly appendTx: (streamId: string, events: NewEvent[], expected: ExpectedRevision) => AppendResult;

  constructor(filePath: string, options: SqliteEventStoreOptions = {}) {
    const inMemory = filePath === ':memory:';
    this.signalKey = inMemory ? `:memory:${randomUUID()}` : resolve(filePath);
    this.pollIntervalMs = options.pollIntervalMs ?? 75;
    this.pageSize = options.subscriptionPageSize ?? 500;
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
    let result: AppendResult;
    try {
      result = this.appendTx(streamId, events, options.expectedRevision);
    } catch (error) {
      if (isSqliteCode(error, 'SQLITE_CONSTRAINT_UNIQUE') || isSqliteCode(error, 'SQLITE_CONSTRAINT_PRIMARYKEY')) {
        throw new WrongExpectedRevisionError(streamId, options.expectedRevision, null);
      }
      throw toStoreError(error);
    }
    this.signal.emit('append', result.position);
    return result;
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    const backwards = options.direction === 'backwards';
    const limit = options.maxCount ?? NO_LIMIT;
    const from = options.fromRevision;
    const sql = backwards
      ? `SELECT * FROM events WHERE stream_id = ? ${from === undefined ? '' : 'AND revision <= ?'} ORDER BY revision DESC LIMIT ?`
      : `SELECT * FROM events WHERE stream_id = ? ${from === undefined ? '' : 'AND revision >= ?'} ORDER BY revision ASC LIMIT ?`;
    const params = from === undefined ? [streamId, limit] : [streamId, from, limit];
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
      readPage: (after, max) => this.readAllSync(after, max),
      onClose: (s) => this.subscriptions.delete(s),
    });
    this.subscriptions.add(subscription);
    return subscription;
  }

  async headPosition(): Promise<Position | null> {
    this.assertOpen();
    return this.query(() => this.headStmt.get()?.position ?? null);
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

  private appendInTransaction(streamId: string, events: NewEvent[], expected: ExpectedRevision): AppendResult {
    const current = this.currentRevisionStmt.get(streamId)?.revision ?? -1;
    if (!revisionMatches(expected, current)) throw new WrongExpectedRevisionError(streamId, expected, current);
    const recordedAt = new Date().toISOString();
    let revision = current;
    let position = 0;
    for (const event of events) {
      revision += 1;
      const info = this.insertStmt.run(
        randomUUID(),
        streamId,
        revision,
        event.type,
        event.schemaVersion ?? 1,
        JSON.stringify(event.data ?? null),
        JSON.stringify(completeMetadata(event.metadata, recordedAt)),
        recordedAt,
      );
      position = Number(info.lastInsertRowid);
    }
    return { nextExpectedRevision: revision, position };
  }

  private readAllSync(after: Position | null, maxCount: number): RecordedEvent[] {
    return this.readAllStmt.all(after ?? 0, maxCount).map(toRecordedEvent);
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
  };
}

function toRecordedEvent(row: EventRow): RecordedEvent {
  return {
    id: row.event_id,
    streamId: row.stream_id,
    type: row.type,
    schemaVersion: row.schema_version,
    data: JSON.parse(row.data) as unknown,
    metadata: JSON.parse(row.metadata) as EventMetadata,
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
  private wake: (() => void) | null = null;

  constructor(private readonly source: SubscriptionSource) {}

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.wake?.();
    this.source.onClose(this);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    let after = this.source.after;
    try {
      while (!this.closed) {
        const page = this.source.readPage(after, this.source.pageSize);
        for (const event of page) {
          if (this.closed) return;
          yield event;
          after = event.position;
        }
        if (page.length < this.source.pageSize && !this.closed) await this.waitForAppend();
      }
    } finally {
      await this.close();
    }
  }

  /** Registered synchronously after the page read, so no in-process append can slip between. */
  private waitForAppend(): Promise<void> {
    return new Promise<void>((done) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.source.signal.off('append', finish);
        this.wake = null;
        done();
      };
      const timer = setTimeout(finish, this.source.pollIntervalMs);
      this.source.signal.on('append', finish);
      this.wake = finish;
    });
  }
}

export function openSqliteEventStore(filePath: string, options?: SqliteEventStoreOptions): SqliteEventStore {
  return new SqliteEventStore(filePath, options);
}
