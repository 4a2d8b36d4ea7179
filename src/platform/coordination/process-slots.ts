/**
 * Who came before this process, for a store shared across machines (MongoDB), where no lock on a
 * shared file can show that a process is gone.
 *
 * A process takes the lowest free slot of a directory on its own disk (`<DATA_DIR>/process-slots`):
 * `slot-<n>.lock`, an SQLite file held in EXCLUSIVE locking mode (a POSIX lock the kernel drops
 * when the process dies, whatever its PID namespace, as owner-locks.ts does). The file keeps a
 * random id made when it was first created, so the slot is the same across restarts and unique
 * across machines (two containers with one hostname have different disks, hence different ids).
 * At most one live process holds a slot; a process restarted on the same data dir takes its
 * predecessor's slot again (it is the lowest free one unless another process started meanwhile).
 *
 * The coordination store records, for each slot id, the instance id of the process that holds it
 * now. A claim made by instance X in slot S is dead once S's record names another instance: X let
 * the slot's lock go, so it stopped or died. A claim of a live process (its slot still names it)
 * stays its own. A process with no slot directory (tests, a read-only disk) proves nothing.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

/** Slot files held by this process (several stores in one process take different slots). */
const heldByThisProcess = new Set<string>();

/** Slots tried before giving up (a directory full of live processes' slots proves nothing). */
const MAX_SLOTS = 256;

export interface ProcessSlot {
  /** Stable id of the slot: the same after a restart on the same data dir. */
  id: string;
  /** Lets the slot go (on close; a SIGKILL lets it go too). */
  release(): void;
}

/** Takes the lowest free slot of `dir`; null when none could be taken. */
export function takeProcessSlot(dir: string): ProcessSlot | null {
  try {
    mkdirSync(dir, { recursive: true });
  } catch {
    return null;
  }
  for (let n = 0; n < MAX_SLOTS; n++) {
    const file = join(dir, `slot-${n}.lock`);
    if (heldByThisProcess.has(file)) continue;
    const db = new Database(file, { timeout: 0 });
    try {
      db.pragma('locking_mode = EXCLUSIVE');
      db.exec('CREATE TABLE IF NOT EXISTS slot (id TEXT NOT NULL)');
      // A write takes the exclusive lock, kept until the connection closes (a read would keep
      // only a shared one, which a second process could share).
      const id = db
        .transaction(() => {
          const row = db.prepare('SELECT id FROM slot').get() as { id: string } | undefined;
          const kept = row?.id ?? randomUUID();
          db.prepare('DELETE FROM slot').run();
          db.prepare('INSERT INTO slot (id) VALUES (?)').run(kept);
          return kept;
        })
        .immediate();
      heldByThisProcess.add(file);
      return {
        id,
        release: () => {
          if (!heldByThisProcess.delete(file)) return;
          db.close();
        },
      };
    } catch {
      db.close(); // held by a live process (SQLITE_BUSY)
    }
  }
  return null;
}
