import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteThread, SqliteThreadError } from '../../../src/platform/sqlite-thread.js';

describe('SqliteThread: a SQLite connection on a worker thread', () => {
  let dir: string;
  let file: string;
  let db: Database.Database;
  const threads: SqliteThread[] = [];
  const open = (options?: ConstructorParameters<typeof SqliteThread>[1]) => {
    const thread = new SqliteThread(file, options);
    threads.push(thread);
    return thread;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sqlite-thread-'));
    file = join(dir, 'db.sqlite');
    db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)');
    db.prepare('INSERT INTO t (id, name) VALUES (?, ?), (?, ?)').run(1, 'one', 2, 'two');
  });

  afterEach(async () => {
    await Promise.all(threads.splice(0).map((t) => t.close()));
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a statement in each mode, with positional and named parameters', async () => {
    const thread = open();
    expect(await thread.run('SELECT id, name FROM t ORDER BY id')).toEqual([{ id: 1, name: 'one' }, { id: 2, name: 'two' }]);
    expect(await thread.run('SELECT id, name FROM t WHERE id > ?', [1], 'raw')).toEqual([[2, 'two']]);
    expect(await thread.run('SELECT name FROM t ORDER BY id', [], 'pluck')).toEqual(['one', 'two']);
    expect(await thread.run('SELECT name FROM t WHERE id = @id', { id: 2 }, 'get')).toEqual({ name: 'two' });
    expect(await thread.run('SELECT name FROM t WHERE id = 9', [], 'get')).toBeUndefined();
  });

  it('leaves the event loop turning while a long statement runs', async () => {
    const thread = open();
    let turns = 0;
    let done = false;
    const long = thread
      .run('WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000000) SELECT count(*) FROM n', [], 'pluck')
      .finally(() => (done = true));
    const spin = async () => {
      while (!done) {
        await new Promise((resolve) => setImmediate(resolve));
        turns++;
      }
    };
    const [count] = await Promise.all([long, spin()]);
    expect(count).toEqual([3000000]);
    // On the main thread the statement would have run to its end before the first turn.
    expect(turns).toBeGreaterThan(1);
  });

  it('hands replies that arrived together to their callers one per turn of the event loop', async () => {
    const thread = open({ readonly: false });
    await thread.run('SELECT 1');
    let turns = 0;
    let stop = false;
    const spin = () => {
      turns++;
      if (!stop) setImmediate(spin);
    };
    setImmediate(spin);
    const seenAt: number[] = [];
    const writes = Array.from({ length: 8 }, (_, i) => thread.run('INSERT INTO t (id, name) VALUES (?, ?)', [10 + i, 'n'], 'run').then(() => seenAt.push(turns)));
    // The main thread stays busy until the worker has run every statement (their rows are
    // committed; each reply is posted right after), so the replies wait in the port together.
    const deadline = Date.now() + 10_000;
    while ((db.prepare('SELECT count(*) FROM t WHERE id >= 10').pluck().get() as number) < 8 && Date.now() < deadline);
    const settled = Date.now() + 50;
    while (Date.now() < settled);
    await Promise.all(writes);
    stop = true;
    expect(seenAt).toHaveLength(8);
    // Each reply (and its caller's continuation) ran in a turn of its own, not back to back.
    expect(new Set(seenAt).size).toBe(8);
  });

  it('sees what another connection committed before the statement started', async () => {
    const thread = open();
    expect(await thread.run('SELECT count(*) FROM t', [], 'pluck')).toEqual([2]);
    db.prepare('INSERT INTO t (id, name) VALUES (3, ?)').run('three');
    expect(await thread.run('SELECT count(*) FROM t', [], 'pluck')).toEqual([3]);
  });

  it('is read-only unless asked otherwise, and a writable one can checkpoint the WAL', async () => {
    const reader = open();
    await expect(reader.run('INSERT INTO t (id, name) VALUES (4, ?)', ['four'], 'run')).rejects.toMatchObject({ code: 'SQLITE_READONLY' });
    const writer = open({ readonly: false, pragmas: ['busy_timeout = 5000'] });
    expect(await writer.run('INSERT INTO t (id, name) VALUES (4, ?)', ['four'], 'run')).toEqual({ changes: 1, lastInsertRowid: 4 });
    const [checkpoint] = await writer.run<Array<{ busy: number }>>('PRAGMA wal_checkpoint(TRUNCATE)');
    expect(checkpoint.busy).toBe(0);
    expect(db.prepare('SELECT name FROM t WHERE id = 4').pluck().get()).toBe('four');
  });

  it('rejects a bad statement with SQLite\'s message and code, and keeps working', async () => {
    const thread = open();
    const error = await thread.run('SELECT nope FROM t').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SqliteThreadError);
    expect(error).toMatchObject({ message: expect.stringMatching(/no such column: nope/), code: 'SQLITE_ERROR' });
    expect(await thread.run('SELECT count(*) FROM t', [], 'pluck')).toEqual([2]);
  });

  it('finishes the statements posted before close, then refuses new ones', async () => {
    const thread = open();
    const before = thread.run('SELECT count(*) FROM t', [], 'pluck');
    const closed = thread.close();
    await expect(before).resolves.toEqual([2]);
    await expect(thread.run('SELECT 1')).rejects.toThrow(/closed/);
    await closed;
    await thread.close();
  });

  it('fails every statement when the file cannot be opened', async () => {
    const thread = open({ readonly: true });
    const missing = new SqliteThread(join(dir, 'missing.sqlite'));
    threads.push(missing);
    await expect(missing.run('SELECT 1')).rejects.toThrow(/unable to open/);
    expect(await thread.run('SELECT 1 AS one', [], 'get')).toEqual({ one: 1 });
  });
});
