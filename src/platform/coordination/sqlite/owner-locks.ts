/**
 * Proof that a lease holder sharing this SQLite coordination file is gone, independent of PIDs
 * and hostnames (in containers every process is PID 1 and replicas may share a hostname).
 *
 * Every owner a store instance acquires for holds an exclusive lock on a small file of its own,
 * `<coordination file>-owners/<sha256(owner)>.lock` (an SQLite database in EXCLUSIVE locking
 * mode: a POSIX lock the kernel drops when the process dies, whatever its PID namespace). A
 * taker that finds the file and can lock it knows its owner is dead and takes its leases at
 * once instead of waiting out their period; a locked file, or none (an owner on an earlier
 * version), proves nothing and the period of observation applies (lease-observation.ts).
 * The SQLite store is one file on one machine, so every holder's lock is on the same disk.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

const SUFFIX = '.lock';

/**
 * Lock files held by this process, by path. Module-wide, not per store: a lock stands for the
 * process, so it must not go when a store object is garbage-collected (better-sqlite3 closes a
 * collected connection) while the process lives on, e.g. awaiting a promise nothing refers to.
 */
const heldByThisProcess = new Map<string, Database.Database>();

export class OwnerLocks {
  /** Lock files this store took (it lets them go on close). */
  private readonly mine = new Set<string>();
  /** Lock files this store tried to take: a failed try (a same-named live owner) is not repeated. */
  private readonly tried = new Set<string>();

  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  /** Takes `owner`'s lock for as long as this store is open (once per owner). */
  hold(owner: string): void {
    const file = this.file(owner);
    if (heldByThisProcess.has(file) || this.tried.has(file)) return;
    this.tried.add(file);
    // The busy timeout waits out another process's probe of this file (it locks it for an instant).
    const db = new Database(file, { timeout: 1000 });
    try {
      db.pragma('locking_mode = EXCLUSIVE');
      db.exec('CREATE TABLE IF NOT EXISTS holder (owner TEXT NOT NULL)');
      db.transaction(() => {
        db.prepare('DELETE FROM holder').run();
        db.prepare('INSERT INTO holder (owner) VALUES (?)').run(owner);
      })();
      heldByThisProcess.set(file, db);
      this.mine.add(file);
    } catch {
      // Another live process uses the same owner name (not a random instance id): it holds the lock.
      db.close();
    }
  }

  /** True only when `owner` had a lock here and nobody holds it now: its process is gone. */
  isDead(owner: string): boolean {
    const file = this.file(owner);
    return !heldByThisProcess.has(file) && this.probe(file) !== null;
  }

  /** Owners whose lock file is left and free (processes that died, or closed without releasing). */
  deadOwners(): string[] {
    let files: string[];
    try {
      files = readdirSync(this.dir).filter((name) => name.endsWith(SUFFIX));
    } catch {
      return [];
    }
    return files.flatMap((name) => {
      const file = join(this.dir, name);
      const owner = heldByThisProcess.has(file) ? null : this.probe(file);
      return owner !== null ? [owner] : [];
    });
  }

  /** Removes a dead owner's lock file once its leases are freed. */
  forget(owner: string): void {
    rmSync(this.file(owner), { force: true });
    rmSync(`${this.file(owner)}-journal`, { force: true });
  }

  /** Lets the locks go; the files stay, so other processes see these owners as gone at once. */
  close(): void {
    for (const file of this.mine) {
      heldByThisProcess.get(file)?.close();
      heldByThisProcess.delete(file);
    }
    this.mine.clear();
  }

  /** The owner named in a lock file that nobody holds; null when held, absent or unreadable. */
  private probe(file: string): string | null {
    if (!existsSync(file)) return null;
    let db: Database.Database | null = null;
    try {
      db = new Database(file, { fileMustExist: true, timeout: 0 });
      db.exec('BEGIN IMMEDIATE');
      const row = db.prepare('SELECT owner FROM holder').get() as { owner: string } | undefined;
      db.exec('ROLLBACK');
      return row?.owner ?? null;
    } catch {
      return null; // SQLITE_BUSY: its owner is alive
    } finally {
      db?.close();
    }
  }

  private file(owner: string): string {
    return join(this.dir, `${createHash('sha256').update(owner).digest('hex').slice(0, 32)}${SUFFIX}`);
  }
}
