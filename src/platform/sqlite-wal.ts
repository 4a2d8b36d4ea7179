import type Database from 'better-sqlite3';

/** Pages in the WAL that trigger an automatic checkpoint (SQLite's default, stated so it cannot drift). */
export const WAL_AUTOCHECKPOINT_PAGES = 1000;
/** After a checkpoint empties the WAL, the file is truncated back to at most this size. */
export const WAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * Keeps a WAL-mode SQLite file's `-wal` beside it bounded: without a size limit the WAL file keeps
 * the largest size it ever reached (it is rewritten from the start, never shrunk), which is how a
 * 36 KB database came to sit beside a 19.5 MB WAL. Every embedded store applies this once per
 * connection.
 */
export function boundWal(db: Database.Database): void {
  db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
}
