import type Database from 'better-sqlite3';
import { SqliteThread } from './sqlite-thread.js';

/** Pages in the WAL that trigger an automatic checkpoint (SQLite's default, stated so it cannot drift). */
export const WAL_AUTOCHECKPOINT_PAGES = 1000;
/** After a checkpoint empties the WAL, the file is truncated back to at most this size. */
export const WAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024;
/** How often the checkpoint thread copies the WAL into the database file. */
export const WAL_CHECKPOINT_INTERVAL_MS = 1000;
/**
 * WAL frames at which the checkpoint thread stops waiting for a quiet moment and holds writers
 * off while it finishes (RESTART), so the WAL cannot grow without bound under constant writes.
 */
export const WAL_FORCED_RESTART_PAGES = 4 * WAL_AUTOCHECKPOINT_PAGES;

/** What a checkpoint thread reports after each round (for tests and the bench). */
export interface WalCheckpointRound {
  /** Frames in the WAL when the last pass began. */
  log: number;
  /** Of those, frames now copied into the database file. */
  checkpointed: number;
  passes: number;
  restarted: boolean;
}

/** A checkpoint thread's handle: `close` stops it (and must run before the main connection closes). */
export interface WalKeeper {
  /** Runs one round now; resolves when it is done (null when the thread is gone). */
  checkpoint(): Promise<WalCheckpointRound | null>;
  /**
   * After the round in flight, a TRUNCATE checkpoint on the thread (copies every frame, waits up to
   * `busyTimeoutMs` for writers and readers, empties the WAL file). False when it could not finish.
   */
  truncate(busyTimeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * Keeps a WAL-mode SQLite file's `-wal` beside it bounded: without a size limit the WAL file keeps
 * the largest size it ever reached (it is rewritten from the start, never shrunk), which is how a
 * 36 KB database came to sit beside a 19.5 MB WAL. Every embedded store applies this once per
 * connection.
 *
 * With `offThread` (the event log and the views, which take commits many times a second) the
 * commit that crosses 1,000 WAL pages no longer copies them into the database file and syncs it
 * on the event loop (10-15 ms once a second at 2,000 endpoints): a worker thread with its own
 * connection to the same file runs the checkpoints (`keepWalOffThread`), and this connection's
 * automatic checkpoint is off. `:memory:` has no WAL and keeps the in-thread setting.
 */
export function boundWal(db: Database.Database, options: { offThread?: boolean } = {}): WalKeeper | null {
  const offThread = options.offThread === true && !db.memory && db.name !== '';
  db.pragma(`wal_autocheckpoint = ${offThread ? 0 : WAL_AUTOCHECKPOINT_PAGES}`);
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  return offThread ? keepWalOffThread(db.name) : null;
}

/** PRAGMA wal_checkpoint's row. */
interface CheckpointRow {
  busy: number;
  log: number;
  checkpointed: number;
}

/** Passes of a round before it settles for what it copied (or forces a restart). */
const PASSES_PER_ROUND = 8;

/**
 * One checkpoint round on the thread's connection: PASSIVE checkpoints (they never take the write
 * lock, so the main thread's commits go on meanwhile) until a pass finds no frame it had not
 * copied. The next commit then starts the WAL over from its beginning (SQLite does that only when
 * every frame was copied when that writer began) and truncates it to journal_size_limit. If
 * commits land during every pass and the WAL has reached WAL_FORCED_RESTART_PAGES, one RESTART
 * pass holds writers off while it copies the last frames (they wait on their busy timeout), so the
 * WAL is bounded whatever the write rate. A WAL of 1,000 pages or more whose every frame is copied
 * is truncated at once (TRUNCATE, never waiting), so a burst followed by quiet leaves no large file.
 *
 * `settledLog`: the WAL's frames when the round before ended with every one copied. A first pass
 * finding the same frames all copied ends the round: nothing was committed in between (or, if
 * the WAL started over and refilled to the same length, those frames are copied too). An idle
 * file's round is then one pass on the thread instead of two.
 */
async function checkpointRound(thread: SqliteThread, busyTimeoutMs: number, settledLog: number | null): Promise<WalCheckpointRound> {
  const pass = (mode: string) => thread.run<CheckpointRow>(`PRAGMA wal_checkpoint(${mode})`, [], 'get');
  let last: CheckpointRow | null = settledLog === null ? null : { busy: 0, log: settledLog, checkpointed: settledLog };
  for (let passes = 1; ; passes++) {
    const row = await pass('PASSIVE');
    const copiedAll = row.busy === 0 && row.checkpointed === row.log;
    if (copiedAll && (row.log === 0 || last?.log === row.log)) {
      // Every frame is in the database file. A WAL grown past the limit by a burst (an import, a
      // rebuild) would keep its size until the next commit resets it; when nobody writes, empty it
      // now. busy_timeout is 0 here: if a writer or an older reader is busy, this waits for the
      // next round instead of holding anyone up.
      if (row.log >= WAL_AUTOCHECKPOINT_PAGES) await pass('TRUNCATE');
      return { ...row, passes, restarted: false };
    }
    if (passes >= PASSES_PER_ROUND) {
      if (row.log < WAL_FORCED_RESTART_PAGES) return { ...row, passes, restarted: false };
      await thread.run(`PRAGMA busy_timeout = ${busyTimeoutMs}`, [], 'exec');
      try {
        const forced = await pass('RESTART');
        return { log: forced.log, checkpointed: forced.checkpointed, passes: passes + 1, restarted: forced.busy === 0 };
      } finally {
        await thread.run('PRAGMA busy_timeout = 0', [], 'exec');
      }
    }
    last = row;
  }
}

/**
 * The checkpoint thread of a WAL file (a read-write SqliteThread on it), with a round every
 * WAL_CHECKPOINT_INTERVAL_MS on an unref'd timer. The thread starts at the first round, so a
 * connection closed within a second (a CLI command, most tests) never starts one. A round that
 * fails (the file busy, or gone) is tried again on the next tick.
 */
export function keepWalOffThread(file: string, options: { intervalMs?: number; busyTimeoutMs?: number } = {}): WalKeeper {
  let thread: SqliteThread | null = null;
  let closed = false;
  let round: Promise<WalCheckpointRound | null> | null = null;
  /** See `checkpointRound`. */
  let settledLog: number | null = null;
  const open = () => (thread ??= new SqliteThread(file, { readonly: false, pragmas: ['busy_timeout = 0', 'synchronous = NORMAL'] }));
  const checkpoint = (): Promise<WalCheckpointRound | null> => {
    if (closed) return Promise.resolve(null);
    round ??= checkpointRound(open(), options.busyTimeoutMs ?? 1000, settledLog)
      .then((done) => {
        settledLog = done.checkpointed === done.log && !done.restarted ? done.log : null;
        return done;
      })
      .catch(() => {
        settledLog = null;
        return null;
      })
      .finally(() => {
        round = null;
      });
    return round;
  };
  const truncate = async (busyTimeoutMs: number): Promise<boolean> => {
    if (closed) return false;
    await round;
    const connection = open();
    // Statements run in the order posted: no round's pass can slip between these three.
    const wait = connection.run(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`, [], 'exec');
    const done = connection.run<CheckpointRow>('PRAGMA wal_checkpoint(TRUNCATE)', [], 'get');
    const reset = connection.run('PRAGMA busy_timeout = 0', [], 'exec');
    const [row] = await Promise.all([done, wait, reset]);
    return row.busy === 0;
  };
  const timer = setInterval(() => void checkpoint(), options.intervalMs ?? WAL_CHECKPOINT_INTERVAL_MS);
  timer.unref();
  return {
    checkpoint,
    truncate,
    async close() {
      clearInterval(timer);
      if (closed) return;
      closed = true;
      await thread?.close();
    },
  };
}
