/**
 * A better-sqlite3 connection on a worker thread, for statements too long to run on the event
 * loop (better-sqlite3's docs recommend a worker for heavy queries): analytics' big reads, WAL
 * checkpoints. The main thread only posts the statement and receives its rows; SQLite's work and
 * the row decoding run on the worker.
 *
 * The worker's code is a string evaluated by `new Worker(code, { eval: true })`, loading
 * better-sqlite3 through `createRequire` from the path the main thread resolved: it runs the same
 * under `tsc` output and under ts-jest (where a worker could not load a `.ts` file).
 *
 * The connection is its own: it sees what other connections (this process's included) have
 * committed when each statement starts (WAL), never their open transactions. Statements run one
 * at a time, in the order `run` was called. A worker idle with nothing pending does not keep the
 * process alive; `close` lets what is pending finish, then ends it.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * How a statement runs, as better-sqlite3 names it: `rows` is `all()` (an object per row), `raw`
 * `raw().all()` (an array per row), `pluck` `pluck().all()` (each row's first column), `get`
 * the first row as an object (undefined if none), `run` `run()` ({ changes, lastInsertRowid }),
 * `exec` `exec()` (no parameters, may hold several statements; undefined).
 */
export type SqliteThreadMode = 'rows' | 'raw' | 'pluck' | 'get' | 'run' | 'exec';

/** Positional parameters, or one object of named ones. */
export type SqliteThreadParams = unknown[] | Record<string, unknown>;

export interface SqliteThreadOptions {
  /** Open read-only (default true): a reader cannot write by mistake. Checkpoints need false. */
  readonly?: boolean;
  /** Run at open, in order, as `db.pragma(p)`: e.g. `busy_timeout = 5000`, `cache_size = -131072`. */
  pragmas?: string[];
  /** Prepared statements kept per connection (least recently used dropped first). Default 256. */
  statementCacheSize?: number;
}

/** An error the worker's statement threw, re-raised here with its message and SQLite code. */
export class SqliteThreadError extends Error {
  constructor(message: string, readonly code: string | undefined) {
    super(message);
    this.name = 'SqliteThreadError';
  }
}

const WORKER_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createRequire } = require('node:module');
const Database = createRequire(workerData.resolveFrom)(workerData.driver);
let db = null;
let openError = null;
try {
  db = new Database(workerData.file, { readonly: workerData.readonly, fileMustExist: workerData.readonly });
  for (const pragma of workerData.pragmas) db.pragma(pragma);
} catch (error) {
  // Every statement then fails with this error.
  openError = error;
  if (db) db.close();
}
const statements = new Map();
function statement(sql, mode) {
  const key = mode + ':' + sql;
  let stmt = statements.get(key);
  if (stmt) {
    statements.delete(key);
  } else {
    stmt = db.prepare(sql);
    if (mode === 'raw') stmt.raw();
    else if (mode === 'pluck') stmt.pluck();
    if (statements.size >= workerData.statementCacheSize) statements.delete(statements.keys().next().value);
  }
  statements.set(key, stmt);
  return stmt;
}
function execute(sql, params, mode) {
  if (openError) throw openError;
  if (mode === 'exec') { db.exec(sql); return undefined; }
  const args = Array.isArray(params) ? params : [params];
  if (mode === 'run') { const r = statement(sql, 'rows').run(...args); return { changes: r.changes, lastInsertRowid: r.lastInsertRowid }; }
  if (mode === 'get') return statement(sql, 'rows').get(...args);
  return statement(sql, mode).all(...args);
}
parentPort.on('message', (message) => {
  if (message.close) {
    statements.clear();
    if (db && db.open) db.close();
    parentPort.close();
    return;
  }
  try {
    parentPort.postMessage({ id: message.id, ok: true, value: execute(message.sql, message.params, message.mode) });
  } catch (error) {
    parentPort.postMessage({ id: message.id, ok: false, message: String(error && error.message || error), code: error && error.code });
  }
});
`;

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; message: string; code?: string };

export class SqliteThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  /** Replies received and not yet handed to their callers (see `received`). */
  private readonly arrived: Reply[] = [];
  private handing = false;
  private nextId = 1;
  /** Set once the worker cannot take statements any more (closed, or died). */
  private ended: Error | null = null;
  /** Set by `close`: no new statements; those posted before it still run. */
  private closing: Error | null = null;
  private readonly exited: Promise<void>;

  constructor(readonly file: string, options: SqliteThreadOptions = {}) {
    const readonly = options.readonly ?? true;
    this.worker = new Worker(WORKER_CODE, {
      eval: true,
      workerData: {
        file,
        readonly,
        pragmas: options.pragmas ?? [],
        statementCacheSize: options.statementCacheSize ?? 256,
        // Resolved here (the package's own entry), so the worker loads the copy this process uses.
        resolveFrom: import.meta.url,
        driver: createRequire(import.meta.url).resolve('better-sqlite3'),
      },
    });
    this.worker.unref();
    this.worker.on('message', (reply: Reply) => this.received(reply));
    // By message, not instanceof: the error can come from another realm (jest's).
    this.worker.on('error', (error: { message?: unknown; code?: unknown }) =>
      this.end(new SqliteThreadError(`SQLite thread for ${file}: ${String(error?.message ?? error)}`, typeof error?.code === 'string' ? error.code : undefined)),
    );
    this.exited = new Promise((resolve) =>
      this.worker.once('exit', (code) => {
        this.end(this.closing ?? new Error(`SQLite thread for ${file} exited (code ${code})`));
        resolve();
      }),
    );
  }

  /** Runs one statement on the worker's connection; see SqliteThreadMode for what it returns. */
  run<T = unknown>(sql: string, params: SqliteThreadParams = [], mode: SqliteThreadMode = 'rows'): Promise<T> {
    const refused = this.ended ?? this.closing;
    if (refused) return Promise.reject(refused);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      // Only a statement in flight keeps the process alive.
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.worker.postMessage({ id, sql, params, mode });
    });
  }

  /** Refuses new statements, lets those pending finish, then closes the connection and ends the thread. Idempotent. */
  async close(): Promise<void> {
    if (!this.ended && !this.closing) {
      this.closing = new Error(`SQLite thread for ${this.file} is closed`);
      // The close message queues behind the statements already posted: they finish first.
      this.worker.ref();
      this.worker.postMessage({ close: true });
    }
    await this.exited;
  }

  /**
   * Replies are handed to their callers one per turn of the event loop. A port delivers every
   * message that is waiting in one go: replies that arrived while the main thread was busy
   * (32 reads of one request started together, say) would otherwise be decoded back to back,
   * each caller's continuation included, in one long stretch that holds the loop.
   */
  private received(reply: Reply): void {
    this.arrived.push(reply);
    if (this.handing) return;
    this.handing = true;
    setImmediate(this.handOne);
  }

  private readonly handOne = (): void => {
    const reply = this.arrived.shift();
    if (reply) this.settle(reply);
    if (this.arrived.length > 0) setImmediate(this.handOne);
    else this.handing = false;
  };

  private settle(reply: Reply): void {
    const waiting = this.pending.get(reply.id);
    if (!waiting) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0 && !this.closing) this.worker.unref();
    if (reply.ok) waiting.resolve(reply.value);
    else waiting.reject(new SqliteThreadError(reply.message, reply.code));
  }

  private end(reason: Error): void {
    this.ended ??= reason;
    // Statements that finished before the thread ended keep their answers.
    for (const reply of this.arrived.splice(0)) this.settle(reply);
    for (const waiting of this.pending.values()) waiting.reject(reason);
    this.pending.clear();
    this.worker.unref();
  }
}
