import type Database from 'better-sqlite3';
import { nextTurn } from './next-turn.js';

/** Pages given back per `incremental_vacuum` step (2 MiB with 4 KiB pages). */
const VACUUM_SLICE_PAGES = 512;

/**
 * Gives a file's free pages back to the file system (auto_vacuum = INCREMENTAL), a slice at a time
 * with a turn of the event loop between two slices: one `incremental_vacuum` of every free page
 * held the loop for as long as it took (an hour of removed checks, or a dropped view generation).
 * Stops when its store closed meanwhile (`stillOpen`), or when a slice freed nothing (another
 * connection keeps adding pages, or none can go): the next call takes the rest. `run` wraps each
 * statement (the event log maps SQLite's errors to its own).
 */
export async function freePagesInSlices(
  db: Database.Database,
  stillOpen: () => boolean = () => db.open,
  run: <T>(statement: () => T) => T = (statement) => statement(),
): Promise<void> {
  const pragma = (sql: string) => run(() => db.pragma(sql, { simple: true }) as number);
  let free = pragma('freelist_count');
  while (free > 0) {
    pragma(`incremental_vacuum(${VACUUM_SLICE_PAGES})`);
    await nextTurn();
    if (!stillOpen()) return;
    const left = pragma('freelist_count');
    if (left >= free) return;
    free = left;
  }
}
