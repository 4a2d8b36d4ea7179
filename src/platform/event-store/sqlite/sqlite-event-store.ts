import { randomBytes, randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { resolve } from 'node:path';
import Database from 'better-sqlite3';
import {
  type AppendOptions,
  type AppendResult,
  type EventMetadata,
  type EventStore,
  type EventSubscription,
  type ExpectedRevision,
  type NewEvent,
  type Position,
  type ReadAllOptions,
  type StreamSelection,
  type ReadStreamOptions,
  type RecordedEvent,
  StoreUnavailableError,
  WrongExpectedRevisionError,
} from '../event-store.port.js';
import { decodeRecord, encodeRecord } from './record-codec.js';
import { RecentEvents } from './recent-events.js';
import { boundWal, type WalKeeper } from '../../sqlite-wal.js';
import { freePagesInSlices } from '../../sqlite-vacuum.js';

export interface SqliteEventStoreOptions {
  /** How often the store looks for appends made by other processes (one look for all its subscriptions). */
  pollIntervalMs?: number;
  /** How long a writer waits for another process's write lock before giving up. */
  busyTimeoutMs?: number;
  /** Events read per catch-up page by subscriptions. */
  subscriptionPageSize?: number;
  /** How many of the newest events stay parsed for this instance's live subscriptions. */
  recentEventsKept?: number;
}

/**
 * The first layout of the log: one self-contained row per event (stream name, type, 36-character
 * event id, metadata JSON and recorded_at text on every row). Files written by earlier versions
 * keep their rows in it, read as they are and never rewritten; new events go to the compact
 * layout below. The benchmark's raw baseline inserts this row.
 */
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
 * The compact layout (issue 12: checks are most of the log). Per event only what differs from
 * event to event: stream and type as small integers (interned in `event_streams`/`event_types`),
 * the event id as 16 bytes, `occurred_at` as milliseconds before `recorded_at` (NULL when equal;
 * text when it is not in canonical form), and the metadata only when it differs from its
 * commit's. One `event_commits` row per append (or per run of appends: shared commits, below)
 * carries recorded_at (epoch ms) and the metadata the append's events share, without
 * occurred_at; its id is the position of the append's first event, so an event finds its commit
 * as the nearest commit at or below its position. `data`
 * is text: JSON, or a packed or coded record (below). Positions continue those of the first layout (sqlite_sequence). `hash` is the
 * event's link in its stream's hash chain (metadata.hash as its bytes: 32 for a full hash, 8 for
 * the 16-hex prefix most chained events store; NULL for events appended before chaining,
 * docs/audit.md).
 *
 * Packed records (issue 31): a JSON object may be stored as U+0001 followed by the JSON array
 * `[shape, value, ...]`, its key list kept once in `event_shapes` (interned like streams and
 * types). Commit and event metadata always are; `data` is when the append says it is a record
 * appended often (`NewEvent.packed`: checks). Reads rebuild the object, keys in their order, so
 * its JSON reads back byte for byte and the hash chain, computed over the logical event above
 * this adapter, still verifies. The leading U+0001 makes a packed column fail loudly in a
 * version that predates this layout instead of reading as something else.
 *
 * Coded records (issue 31): packed `data` whose values are all scalars (a probed check's) is
 * stored as U+0003 and `[shape, value, ...]` in the 7-bit code of `record-codec.ts` (15 bytes
 * for a probed check's 35 as packed text); a record with any other value (nested, NaN, a lone
 * surrogate) stays packed text. A version that predates this fails on the U+0003 (JSON.parse)
 * instead of misreading it; this version refuses any other control character it does not know
 * as a column's first character (a form of a later version). A coded record of shape 1-20 (a
 * probed check's: its key lists are among a log's first) is stored as the one character
 * U+0003 + shape, then its values (session 17: a byte less a check); versions before refuse
 * these marks as a later version's. U+0018-U+001F stay free.
 *
 * Interned metadata (issue 31): metadata naming nothing but its actor (a system component's
 * appends: every probed check) is stored as U+0002 followed by the id of its JSON text, kept
 * once in `event_texts`.
 *
 * Derived event ids (issue 31): `event_id` holds 0 for an event whose id is derived from its
 * position: the file's random 10-byte prefix (`event_log_file`, made when the table is; UUID
 * version 8 and variant bits set in it) followed by the position as 6 bytes, so the id's last
 * group is the position in hex. Stable (a position never changes) and unique within the file;
 * unique across files as random UUIDs are, by the prefix. Events appended before keep their
 * 16 stored bytes. A version that predates this reads neither form: it fails on the 0 and on
 * U+0002 instead of reading something else.
 *
 * Shared commits (issue 31): an append recorded at most SHARED_COMMIT_MS after the log's last
 * commit adds no commit row of its own when its stored commit metadata is that commit's, or when
 * it is a single event (whose metadata then goes in its own `metadata` column, as an event's
 * that differs from its commit's always does): its events join that commit, and `event_id`
 * holds their recorded_at as milliseconds after the commit's (still a derived id; 0 when equal).
 * A probed check's append, one event with the prober's interned metadata, then costs a one- or
 * two-byte integer instead of an 18-byte commit row, and the id reservations and alert signals
 * between checks no longer start commits of their own. Reads
 * give the same events as with a commit row per append (nothing reads commit boundaries). A
 * version that predates this fails on an `event_id` other than 0 ("unknown event id form").
 *
 * Positions without a sequence row (issue 31): `position` is a plain INTEGER PRIMARY KEY, not
 * AUTOINCREMENT, whose sqlite_sequence row was one page more in every commit (about a fifth of
 * a single-event append's CPU). SQLite gives a new row the newest position plus one, so a
 * position could come back only after the newest event was removed: a removal that takes it
 * records it as `event_log_file.position_floor`, and the next append starts after it. The
 * newest position of a file of the first layout seeds the floor the same way. Files created
 * before keep their AUTOINCREMENT table (and its sequence row).
 *
 * Kinds (issue 31, session 17): `type` names a type and a schema version together, each pair
 * interned once in `event_types` (a type appended at two versions has two rows), and event_log
 * has no `schema_version` column: a row holds one integer and one header byte less (2 bytes a
 * probed check). Files created before keep their `schema_version` column and a `type` that
 * names the type alone (`SqliteEventStore.kinds` is false for them). A version that predates
 * this fails on such a file (no `schema_version` column) instead of misreading it. The file's
 * first kind of packed records (a probed check's) takes the id 0 (session 20: `newKind`).
 *
 * Stream constants (issue 31, session 18): an append may name keys of its packed records whose
 * values seldom change within the stream (`NewEvent.streamConstants`: a check's team, project
 * and configuration version). The stream's first such record fixes their values once, as a JSON
 * object in `event_streams.constants` (its keys in the order the append named them), never
 * changed afterwards; a coded record then leaves out the first m of those keys, in that order,
 * whose values equal the stream's (a key its shape does not hold is passed over), and reads take
 * them back from the stream: a record of k keys holding k - m values has the first m constant
 * keys its shape holds left out. A record that differs in one (its endpoint moved, its
 * configuration changed) still leaves out those before it, and a record of a shape without them
 * is whole.
 * A probed check's ids take a character or more each, its success excerpt (up to 16 bytes of
 * the answer) up to 18: 6 characters in the bench, whose target answers `ok`.
 * Files created before get the column when opened (NULL: no constants yet). A version that
 * predates this refuses a shortened record (its values do not match its shape's keys) instead of
 * misreading it.
 */
const SQLITE_COMPACT_SCHEMA = `
  CREATE TABLE IF NOT EXISTS event_streams (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, constants TEXT);
  CREATE TABLE IF NOT EXISTS event_types (id INTEGER PRIMARY KEY, name TEXT NOT NULL, schema_version INTEGER NOT NULL, UNIQUE (name, schema_version));
  CREATE TABLE IF NOT EXISTS event_commits (id INTEGER PRIMARY KEY, recorded_at INTEGER NOT NULL, metadata TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS event_shapes (id INTEGER PRIMARY KEY, keys TEXT NOT NULL UNIQUE);
  CREATE TABLE IF NOT EXISTS event_texts (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE);
  CREATE TABLE IF NOT EXISTS event_log_file (id INTEGER PRIMARY KEY CHECK (id = 1), event_id_prefix BLOB NOT NULL, position_floor INTEGER);
  CREATE TABLE IF NOT EXISTS event_log (
    position       INTEGER PRIMARY KEY,
    stream         INTEGER NOT NULL,
    revision       INTEGER NOT NULL,
    type           INTEGER NOT NULL,
    event_id       BLOB    NOT NULL,
    occurred_at,
    metadata       TEXT,
    data           TEXT    NOT NULL,
    hash           BLOB,
    UNIQUE (stream, revision)
  )`;

/** The file's event id prefix: 10 random bytes with the UUID version (8) and variant bits set. */
function newEventIdPrefix(): Buffer {
  const prefix = randomBytes(10);
  prefix[6] = (prefix[6] & 0x0f) | 0x80;
  prefix[8] = (prefix[8] & 0x3f) | 0x80;
  return prefix;
}

/**
 * Creates the compact tables if missing. In a file of the first layout, its newest position
 * seeds event_log's position floor, so positions keep increasing across the two tables.
 * `keepsFloor`: event_log has no AUTOINCREMENT, so appends and removals keep the floor.
 */
function ensureCompactSchema(db: Database.Database): { legacy: boolean; idPrefix: Buffer; keepsFloor: boolean; kinds: boolean } {
  const kinds = () => db.prepare(`SELECT 1 FROM pragma_table_info('event_log') WHERE name = 'schema_version'`).get() === undefined;
  const keepsFloor = () => !/AUTOINCREMENT/i.test(db.prepare(`SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'event_log'`).pluck().get() as string);
  const exists = (name: string) => db.prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?`).get(name) !== undefined;
  const hasHash = () => (db.prepare(`SELECT 1 FROM pragma_table_info('event_log') WHERE name = 'hash'`).get() !== undefined);
  const hasFloor = () => db.prepare(`SELECT 1 FROM pragma_table_info('event_log_file') WHERE name = 'position_floor'`).get() !== undefined;
  const idPrefix = () => db.prepare('SELECT event_id_prefix FROM event_log_file WHERE id = 1').pluck().get() as Buffer | undefined;
  const hasConstants = () => db.prepare(`SELECT 1 FROM pragma_table_info('event_streams') WHERE name = 'constants'`).get() !== undefined;
  // Only a file without the compact tables (or without the hash column, shapes, texts, prefix or stream constants) takes the write lock (readers of a current file never wait).
  if (exists('event_log') && hasHash() && exists('event_shapes') && exists('event_texts') && exists('event_log_file') && (!keepsFloor() || hasFloor()) && hasConstants()) {
    const prefix = idPrefix();
    if (prefix !== undefined) return { legacy: exists('events'), idPrefix: prefix, keepsFloor: keepsFloor(), kinds: kinds() };
  }
  return db
    .transaction(() => {
      const legacy = exists('events');
      if (exists('event_log')) {
        if (!hasHash()) db.exec('ALTER TABLE event_log ADD COLUMN hash BLOB');
        db.exec('CREATE TABLE IF NOT EXISTS event_shapes (id INTEGER PRIMARY KEY, keys TEXT NOT NULL UNIQUE)');
        db.exec('CREATE TABLE IF NOT EXISTS event_texts (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE)');
        db.exec('CREATE TABLE IF NOT EXISTS event_log_file (id INTEGER PRIMARY KEY CHECK (id = 1), event_id_prefix BLOB NOT NULL)');
        if (keepsFloor() && !hasFloor()) db.exec('ALTER TABLE event_log_file ADD COLUMN position_floor INTEGER');
        if (!hasConstants()) db.exec('ALTER TABLE event_streams ADD COLUMN constants TEXT');
      } else {
        db.exec(SQLITE_COMPACT_SCHEMA);
        if (!hasFloor()) db.exec('ALTER TABLE event_log_file ADD COLUMN position_floor INTEGER');
        db.prepare('INSERT OR IGNORE INTO event_log_file (id, event_id_prefix) VALUES (1, ?)').run(newEventIdPrefix());
        if (legacy) {
          const seq = db.prepare(`SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0), coalesce((SELECT max(position) FROM events), 0)) AS seq`).get() as { seq: number };
          if (seq.seq > 0) db.prepare('UPDATE event_log_file SET position_floor = ? WHERE id = 1').run(seq.seq);
        }
      }
      db.prepare('INSERT OR IGNORE INTO event_log_file (id, event_id_prefix) VALUES (1, ?)').run(newEventIdPrefix());
      return { legacy, idPrefix: idPrefix()!, keepsFloor: keepsFloor(), kinds: kinds() };
    })
    .immediate();
}

/**
 * WAL with synchronous=NORMAL: a committed append survives a crash or SIGKILL of any process
 * (the WAL is written before the commit returns); only an OS crash or power loss can drop the
 * newest commits. FULL (SQLITE_SYNCHRONOUS=FULL) fsyncs every commit and caps appends near
 * the disk's fsync rate (about 300/s here), below what 1,000 endpoints at 1 s need.
 * `walOffThread`: checkpoints run on a worker thread (see boundWal); the caller closes the keeper.
 */
export function applySqliteEventLogPragmas(db: Database.Database, busyTimeoutMs: number, options: { walOffThread?: boolean } = {}): WalKeeper | null {
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  // Before the first table is created, so a new file can give pages freed by retention back
  // (PRAGMA incremental_vacuum). A file created without it keeps auto_vacuum = NONE until an
  // operator runs VACUUM once (`npm run retention -- apply --vacuum`).
  db.pragma('auto_vacuum = INCREMENTAL');
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${process.env.SQLITE_SYNCHRONOUS === 'FULL' ? 'FULL' : 'NORMAL'}`);
  return boundWal(db, { offThread: options.walOffThread });
}

/** A row of the first layout (`events`). */
interface LegacyRow {
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

/** A row of the compact layout, joined with its stream, type and commit. */
interface CompactRow {
  position: number;
  stream_id: string;
  revision: number;
  type: string;
  schema_version: number;
  /** 16 bytes, text (an id that is not a UUID), or an integer: derived from the position, recorded that many ms after its commit. */
  event_id: Buffer | string | number;
  occurred_at: number | string | null;
  metadata: string | null;
  data: string;
  /** Lowercase hex (`READ_HASH`). */
  hash: string | null;
  recorded_at: number;
  commit_metadata: string;
  /** The stream's id in `event_streams` (its constants: see the layout). */
  stream: number;
}

/**
 * The chain hash as read: its lowercase hex text, made by SQLite. better-sqlite3 hands a BLOB out
 * as a new Buffer, about 1.2 us a row more than a string (see record-codec.ts), and the hash was
 * turned into hex anyway. NULL stays NULL (hex gives '' for it; no stored hash is empty).
 */
const READ_HASH = `nullif(lower(hex(e.hash)), '')`;

/** The schema version's column: the kind's (`t`) in a file of kinds, else the row's (see the layout). */
const schemaVersionOf = (kinds: boolean) => (kinds ? 't.schema_version' : 'e.schema_version');

const compactSelect = (kinds: boolean) => `
  SELECT e.position, s.name AS stream_id, e.revision, t.name AS type, ${schemaVersionOf(kinds)} AS schema_version, e.event_id,
         e.occurred_at, e.metadata, e.data, ${READ_HASH} AS hash, c.recorded_at, c.metadata AS commit_metadata, e.stream
  FROM event_log e
  JOIN event_streams s ON s.id = e.stream
  JOIN event_types t ON t.id = e.type
  JOIN event_commits c ON c.id = (SELECT id FROM event_commits WHERE id <= e.position ORDER BY id DESC LIMIT 1)`;

/**
 * `readCompactPage`'s event rows: `compactSelect`'s columns up to `hash`, and the stream's id, as
 * arrays. With a stream selection (`selectedPageSelect`), only the rows of the streams whose ids
 * the JSON array parameter lists, or of every other stream (`+` keeps the scan on the position
 * key: the (stream, revision) index would sort every matching row for each page), and each row's
 * commit id: the rows of a few streams may be far apart, and the commits between them are not read.
 */
const pageSelect = (kinds: boolean, selection: '' | 'IN' | 'NOT IN' = '') => `
  SELECT e.position, s.name, e.revision, t.name, ${schemaVersionOf(kinds)}, e.event_id, e.occurred_at, e.metadata, e.data, ${READ_HASH}, e.stream
         ${selection === '' ? '' : ', (SELECT max(id) FROM event_commits WHERE id <= e.position)'}
  FROM event_log e
  JOIN event_streams s ON s.id = e.stream
  JOIN event_types t ON t.id = e.type
  WHERE e.position > ? ${selection === '' ? '' : `AND +e.stream ${selection} (SELECT value FROM json_each(?))`} ORDER BY e.position LIMIT ?`;
type PageRow = [position: number, streamId: string, revision: number, type: string, schemaVersion: number, eventId: Buffer | string | number, occurredAt: number | string | null, metadata: string | null, data: string, hash: string | null, stream: number];
type SelectedPageRow = [...PageRow, commit: number];
const selectedPageSelects = (kinds: boolean) => ({ only: pageSelect(kinds, 'IN'), except: pageSelect(kinds, 'NOT IN') });

/** The commits of a selected page's rows, by id (a JSON array). */
const COMMITS_BY_ID = `SELECT id, recorded_at, metadata FROM event_commits WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id`;

/** The ids of the named streams this file holds (a JSON array of names). */
const STREAM_IDS = `SELECT id FROM event_streams WHERE name IN (SELECT value FROM json_each(?))`;

/** The commits of the events from the first position to the last: the one at or below the first, and every later one up to the last. */
const PAGE_COMMITS = `
  SELECT id, recorded_at, metadata FROM event_commits
  WHERE id >= (SELECT coalesce(max(id), 0) FROM event_commits WHERE id <= ?) AND id <= ? ORDER BY id`;
type CommitRow = [id: number, recordedAt: number, metadata: string];

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

type InternKind = 'stream' | 'type' | 'shape' | 'text';

/** Marks a packed record (see the compact layout): never the first character of JSON text. */
const PACKED = '\u0001';
/** Marks interned metadata: U+0002 and the id of its text in `event_texts`. */
const INTERNED = '\u0002';
/** Marks a coded record: U+0003 and the characters of `record-codec.ts`. */
const CODED = '\u0003';
/**
 * Marks a coded record whose shape is 1-20 (a probed check's, whose key lists are among the
 * first a log interns): U+0003 plus the shape, then the characters of its values, one character
 * less than U+0003 and the shape as a value. U+0018-U+001F stay free for later forms.
 */
const SHAPED_CODED_BASE = 0x03;
const SHAPED_CODED_LAST = 0x17;

/** What turning compact rows into events needs beside the rows: the file's interned names and its id prefix. */
interface StoredForms {
  keysOfShape(id: number): string[];
  textOf(id: number): string;
  /** The constants of the stream of id `stream` (see the layout); null when it has none. */
  constantsOf(stream: number): Readonly<Record<string, unknown>> | null;
  /** The first four groups of a derived event id (`xxxxxxxx-xxxx-xxxx-xxxx-`), from the file's prefix. */
  readonly idHead: string;
}

interface AppendedEvents {
  result: AppendResult;
  /** The appended events as readers get them; built only while someone is subscribed. */
  events: RecordedEvent[] | null;
  /** Names interned by this append, remembered once it committed. */
  interned: Array<[kind: InternKind, name: string, id: number]>;
  /** The stream's constants this append used (fixed by it, or read in its transaction), remembered once it committed. */
  constants: StreamConstants | null;
}

/** A stream's constants (see the layout): as stored, and read. */
interface StreamConstants {
  stream: number;
  text: string;
  values: Readonly<Record<string, unknown>>;
}

/** An event's stored columns, computed before the append writes anything. */
interface PreparedRow {
  type: number;
  schemaVersion: number;
  occurredAt: bigint | string | null;
  metadata: string | null;
  data: string;
}

/** A commit row as an append compares itself with it. */
interface StoredCommit {
  recorded_at: number;
  metadata: string;
}

/**
 * What the appends of one group transaction learn from each other: the log's last commit and
 * that the position floor is clear, which no other connection can change while it is open.
 */
interface GroupState {
  /** null: not known yet in this transaction. */
  lastCommit: StoredCommit | null;
  floorClear: boolean;
}

/** An append checked and in its stored form, not written yet (`prepareAppend`). */
interface PreparedAppend {
  streamId: string;
  /** Null: the stream is new to the compact layout; its row is written with its first event. */
  stream: number | null;
  current: number;
  events: NewEvent[];
  stored: SplitMetadata[];
  rows: PreparedRow[];
  storedEventId: bigint;
  sharesCommit: boolean;
  storedCommitMetadata: string;
  nowMs: number;
  /** The log's last commit before this append (undefined: none). */
  lastCommit: StoredCommit | undefined;
  recordedAt: string;
  interned: AppendedEvents['interned'];
  /** The stream's constants the append's records use (null: none); `fixes`: this append stores them. */
  constants: { text: string; values: Readonly<Record<string, unknown>>; fixes: boolean } | null;
}

/**
 * How stale another process's append may be when a read to a stream's end is answered from the
 * known heads: a millisecond, less than the time the appending process takes to answer its own
 * caller, so no caller can tell.
 */
const HEADS_RECHECK_MS = 1;

/** Interned names (streams, types): an id once committed never changes, so any process may keep it. */
const MAX_INTERNED = 100_000;

export class SqliteEventStore implements EventStore {
  private readonly db: Database.Database;
  private walKeeper: WalKeeper | null = null;
  private readonly busyTimeoutMs: number;
  private readonly signalKey: string;
  private readonly signal: EventEmitter;
  private readonly pollIntervalMs: number;
  private readonly pageSize: number;
  private readonly subscriptions = new Set<SqliteSubscription>();
  /**
   * Another connection's commits, looked for every pollIntervalMs while anyone is subscribed:
   * one `PRAGMA data_version` for all the subscriptions (a dozen per process), which wake only
   * when it moved. A timer per subscription, each reading its page, cost an idle service about
   * 170 wake-ups a second.
   */
  private readonly otherCommits = new OtherCommits(() => this.dataVersion(), (version) => {
    // Fresh for the pages the woken subscriptions read (see `recentDataVersionNow`).
    this.subscriptionVersion = { at: performance.now(), version };
  });
  private closed = false;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly rawStatements = new Map<string, Database.Statement>();
  private readonly recent: RecentEvents;
  /** `PRAGMA data_version` when `recent` last reached the head: unchanged means no other connection has appended since. */
  private recentDataVersion: number | null = null;
  /**
   * The file still holds events of the first layout (`events`), all at positions up to this one
   * (no process appends there any more; retention may remove some). Null: none to read.
   */
  private readonly legacyHead: number | null;
  /** event_log has no sequence row: the position floor is kept (see the compact layout). */
  private readonly keepsFloor: boolean;
  /** event_log's `type` names a kind (type and schema version) and the row has no schema_version (see the layout). */
  private readonly kinds: boolean;
  /** The statements that differ between files of kinds and files before them, made once. */
  private readonly sql: { insert: string; insertAt: string; compactSelect: string; pageSelect: string; selectedPageSelects: { only: string; except: string } };
  private readonly streamIds = new Map<string, number>();
  private readonly typeIds = new Map<string, number>();
  /** In a file of kinds (see the layout), the kind ids by type name and schema version. */
  private readonly kindIds = new Map<string, Map<number, number>>();
  /** Shape ids by key list (JSON array text), and key lists by id for reads. */
  private readonly shapeIds = new Map<string, number>();
  private readonly shapeKeys = new Map<number, string[]>();
  private readonly keysOfShape = (id: number): string[] => {
    let keys = this.shapeKeys.get(id);
    if (keys === undefined) {
      const text = this.statement('SELECT keys FROM event_shapes WHERE id = ?').pluck().get(id) as string | undefined;
      if (text === undefined) throw new Error(`The event log names shape ${id}, which it does not hold`);
      keys = JSON.parse(text) as string[];
      if (this.shapeKeys.size >= MAX_INTERNED) this.shapeKeys.clear();
      this.shapeKeys.set(id, keys);
    }
    return keys;
  };
  /** Interned metadata texts, by text and by id. */
  private readonly textIds = new Map<string, number>();
  private readonly texts = new Map<number, string>();
  private readonly textOf = (id: number): string => {
    let text = this.texts.get(id);
    if (text === undefined) {
      text = this.statement('SELECT text FROM event_texts WHERE id = ?').pluck().get(id) as string | undefined;
      if (text === undefined) throw new Error(`The event log names text ${id}, which it does not hold`);
      if (this.texts.size >= MAX_INTERNED) this.texts.clear();
      this.texts.set(id, text);
    }
    return text;
  };
  /** Streams' constants (see the layout) by stream id, remembered once committed: they never change. */
  private readonly constantsByStream = new Map<number, StreamConstants>();
  /** A stream's committed constants (outside an append's transaction; see `constantsFor` inside one). */
  private readonly constantsOf = (stream: number): Readonly<Record<string, unknown>> | null => {
    const known = this.constantsByStream.get(stream);
    if (known !== undefined) return known.values;
    const stored = this.storedConstants(stream);
    if (stored === null) return null;
    this.rememberConstants(stored);
    return stored.values;
  };

  /** A stream's constants as the file holds them (null: none yet); remembering them is the caller's choice. */
  private storedConstants(stream: number): StreamConstants | null {
    const text = this.statement('SELECT constants FROM event_streams WHERE id = ?').pluck().get(stream) as string | null | undefined;
    return typeof text === 'string' ? { stream, text, values: JSON.parse(text) as Record<string, unknown> } : null;
  }
  private readonly forms: StoredForms;
  /**
   * For each stream, a revision no event after which reads back, as this connection last saw it
   * (read to the end, or appended by it), valid while `PRAGMA data_version` stays
   * `headsDataVersion`: no other connection has committed since. A cached fold asking for what
   * follows its revision (a channel checked before each notification, an endpoint before each
   * command) is answered without a query when nothing can have been appended.
   */
  private readonly knownHeads = new Map<string, number>();
  private headsDataVersion: number | null = null;
  /** performance.now() of the last data_version check (see HEADS_RECHECK_MS). */
  private headsCheckedAt = -Infinity;
  /** The data_version subscriptions compared last, and when it was read (`recentDataVersionNow`). */
  private subscriptionVersion: { at: number; version: number } | null = null;
  /** Another instance of this process appended to the file: the heads it may have moved are unknown. */
  private readonly onAppendElsewhere = (_position: number, by: unknown) => {
    if (by === this) return;
    this.knownHeads.clear();
    this.subscriptionVersion = null;
  };

  private readonly appendTx: (streamId: string, events: NewEvent[], expected: ExpectedRevision) => AppendedEvents;
  private readonly removeTx: (streamId: string, throughRevision: number, types: string[]) => number;
  private readonly groupTx: (batch: PendingAppend[], outcomes: Array<AppendedEvents | { error: unknown }>, failed: ReadonlyMap<number, unknown>) => void;

  constructor(filePath: string, options: SqliteEventStoreOptions = {}) {
    const inMemory = filePath === ':memory:';
    this.signalKey = inMemory ? `:memory:${randomUUID()}` : resolve(filePath);
    this.pollIntervalMs = options.pollIntervalMs ?? 75;
    this.pageSize = options.subscriptionPageSize ?? 500;
    this.recent = new RecentEvents(options.recentEventsKept ?? 2000);
    this.busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    try {
      this.db = new Database(filePath);
      this.walKeeper = applySqliteEventLogPragmas(this.db, this.busyTimeoutMs, { walOffThread: true });
      const { legacy, idPrefix, keepsFloor, kinds } = ensureCompactSchema(this.db);
      this.keepsFloor = keepsFloor;
      this.kinds = kinds;
      const columns = `stream, revision, type, ${kinds ? '' : 'schema_version, '}event_id, occurred_at, metadata, data, hash`;
      // One parameter per column, the last (the chain hash) bound as its hex text and stored as its bytes: SQLite decodes it.
      const values = `${'?, '.repeat(columns.split(',').length - 1)}unhex(?)`;
      this.sql = {
        insert: `INSERT INTO event_log (${columns}) VALUES (${values})`,
        insertAt: `INSERT INTO event_log (position, ${columns}) VALUES (?, ${values})`,
        compactSelect: compactSelect(kinds),
        pageSelect: pageSelect(kinds),
        selectedPageSelects: selectedPageSelects(kinds),
      };
      const hex = idPrefix.toString('hex');
      this.forms = { keysOfShape: this.keysOfShape, textOf: this.textOf, constantsOf: this.constantsOf, idHead: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-` };
      this.legacyHead = legacy ? ((this.db.prepare('SELECT max(position) AS head FROM events').get() as { head: number | null }).head ?? null) : null;
    } catch (error) {
      void this.walKeeper?.close();
      throw new StoreUnavailableError(`Cannot open the event log at ${filePath}`, { cause: error });
    }
    this.signal = acquireSignal(this.signalKey);
    this.signal.on('append', this.onAppendElsewhere);
    // IMMEDIATE takes the write lock before reading the current revision, so two processes can
    // never both pass the check; the busy timeout makes the second one wait instead of failing.
    this.appendTx = this.db.transaction(this.appendInTransaction.bind(this)).immediate;
    this.removeTx = this.db.transaction(this.removeInTransaction.bind(this)).immediate;
    this.groupTx = this.db.transaction(this.groupInTransaction.bind(this)).immediate;
  }

  /**
   * Group commit (issue 31), the caller's choice (`groupCommit`). Such appends made in one turn
   * of the event loop (the probes whose answers arrived in one poll phase) wait for the next
   * `setImmediate` and are written in one SQLite transaction. Any other append is written at
   * once, together with the grouped ones still waiting (in the order they were made): a
   * command's next command on its stream waits for it, so holding it to the end of the turn
   * would bind a hot stream to one append per turn. A refused append (wrong revision) fails
   * alone and the others commit: every check comes before the append's first write, so it needs
   * no savepoint (they cost about half of the log's share of a probed check). An append whose
   * write fails part-way (a statement SQLite refused without ending the transaction) makes the
   * transaction roll back; the group is then written again without it, so it still fails alone.
   * Each append resolves only after the COMMIT, so a caller never sees an append that a crash
   * could take back; when SQLite ends the transaction itself (disk full, I/O error), every
   * append in it fails.
   */
  async append(
    streamId: string,
    events: NewEvent[],
    options: AppendOptions,
  ): Promise<AppendResult> {
    this.assertOpen();
    if (events.length === 0) throw new Error('append needs at least one event');
    return new Promise<AppendResult>((resolve, reject) => {
      const waiting = this.pending.push({ streamId, events, expected: options.expectedRevision, resolve, reject });
      if (options.groupCommit !== true) this.flushPending();
      else if (waiting === 1) setImmediate(this.flushPending);
    });
  }

  /** Set while a group's transaction is open (`groupInTransaction`). */
  private group: GroupState | null = null;

  /** Appends waiting for the next group commit, in the order they were made. */
  private pending: PendingAppend[] = [];

  private readonly flushPending = (): void => {
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    if (batch.length === 1) {
      const [item] = batch;
      let appended: AppendedEvents;
      try {
        appended = this.appendTx(item.streamId, item.events, item.expected);
      } catch (error) {
        item.reject(appendError(error, item));
        return;
      }
      item.resolve(this.committed(item.streamId, appended));
      return;
    }
    const outcomes: Array<AppendedEvents | { error: unknown }> = new Array(batch.length);
    // Appends whose write failed part-way: left out when the group is written again.
    const failed = new Map<number, unknown>();
    for (;;) {
      try {
        this.groupTx(batch, outcomes, failed);
        break;
      } catch (error) {
        // Nothing of the transaction was committed: names read back inside it may not exist.
        this.shapeKeys.clear();
        this.texts.clear();
        if (error instanceof PartlyWritten) {
          failed.set(error.index, appendError(error.cause, batch[error.index]));
          continue;
        }
        const failure = toStoreError(error);
        batch.forEach((item, i) => {
          const outcome = outcomes[i];
          item.reject(outcome !== undefined && 'error' in outcome ? outcome.error : failure);
        });
        return;
      }
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i];
      if ('error' in outcome) item.reject(outcome.error);
      else item.resolve(this.committed(item.streamId, outcome));
    });
  };

  /**
   * The appends of one turn in one IMMEDIATE transaction, one after another. An append refused
   * while it is prepared has written no event and fails alone; one that fails while writing
   * throws PartlyWritten, which rolls the transaction back (see `flushPending`).
   */
  private groupInTransaction(batch: PendingAppend[], outcomes: Array<AppendedEvents | { error: unknown }>, failed: ReadonlyMap<number, unknown>): void {
    this.group = { lastCommit: null, floorClear: false };
    try {
      this.groupAppends(batch, outcomes, failed);
    } finally {
      this.group = null;
    }
  }

  private groupAppends(batch: PendingAppend[], outcomes: Array<AppendedEvents | { error: unknown }>, failed: ReadonlyMap<number, unknown>): void {
    for (let i = 0; i < batch.length; i++) {
      const item = batch[i];
      if (failed.has(i)) {
        outcomes[i] = { error: failed.get(i) };
        continue;
      }
      let prepared: PreparedAppend;
      try {
        prepared = this.prepareAppend(item.streamId, item.events, item.expected);
      } catch (error) {
        outcomes[i] = { error: appendError(error, item) };
        // SQLite rolled the whole transaction back (disk full, I/O error): none of it commits.
        if (!this.db.inTransaction) throw error;
        continue;
      }
      try {
        outcomes[i] = this.writeAppend(prepared);
      } catch (error) {
        outcomes[i] = { error: appendError(error, item) };
        if (!this.db.inTransaction) throw error;
        throw new PartlyWritten(i, error);
      }
    }
  }

  /** After the commit: what this connection remembers of an append, and the signal to subscribers. */
  private committed(streamId: string, appended: AppendedEvents): AppendResult {
    for (const [kind, name, id] of appended.interned) {
      if (kind === 'type' && this.kinds) this.rememberKind(name, id);
      else this.remember(this.internCache(kind), name, id);
    }
    if (appended.constants !== null) this.rememberConstants(appended.constants);
    // Our own commits leave data_version as it is: the heads we know stay valid, this one moves.
    if (this.knownHeads.has(streamId)) this.knownHeads.set(streamId, appended.result.nextExpectedRevision);
    if (appended.events) this.rememberAppended(appended.events);
    else this.recent.clear();
    this.signal.emit('append', appended.result.position, this);
    return appended.result;
  }

  private rememberConstants(constants: StreamConstants): void {
    if (this.constantsByStream.size >= MAX_INTERNED) this.constantsByStream.clear();
    this.constantsByStream.set(constants.stream, constants);
  }

  /**
   * Our own append joins the cached stretch when it directly follows it; otherwise (another
   * connection appended in between, or nobody is subscribed) the stretch is dropped.
   */
  private rememberAppended(events: RecordedEvent[]): void {
    const joins = this.subscriptions.size > 0 && this.recent.newest !== null && events[0].position === this.recent.newest + 1;
    if (joins) this.recent.extend(this.recent.newest!, events);
    else this.recent.clear();
  }

  readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    // The common read (a cached fold asking what follows its revision: three a probed check) is
    // answered from the known head before anything is built for a query: the query's closures
    // and parameters were 3-5 % of the bytes a check allocated at saturation.
    const from = options.fromRevision;
    if (!this.closed && from !== undefined && options.direction !== 'backwards' && options.maxCount === undefined) {
      try {
        if (this.knownEmptyAfter(streamId, from)) return Promise.resolve([]);
      } catch (error) {
        return Promise.reject(toStoreError(error));
      }
    }
    return this.queryStream(streamId, options);
  }

  /** Whether the known head says the stream holds nothing from revision `from` on. */
  private knownEmptyAfter(streamId: string, from: number): boolean {
    this.dropHeadsIfStale();
    const head = this.knownHeads.get(streamId);
    return head !== undefined && head < from;
  }

  private async queryStream(streamId: string, options: ReadStreamOptions): Promise<RecordedEvent[]> {
    this.assertOpen();
    const backwards = options.direction === 'backwards';
    const from = options.fromRevision;
    const limit = options.maxCount;
    // No LIMIT clause unless asked: a bound LIMIT makes SQLite about four times slower on the
    // common read (a cached fold asking for what follows its revision, usually nothing).
    const part = (select: string, streamCondition: string) =>
      [
        `${select} WHERE ${streamCondition}`,
        from === undefined ? '' : backwards ? 'AND revision <= ?' : 'AND revision >= ?',
        backwards ? 'ORDER BY revision DESC' : 'ORDER BY revision ASC',
        limit === undefined ? '' : 'LIMIT ?',
      ].join(' ');
    const params = [streamId, ...(from === undefined ? [] : [from]), ...(limit === undefined ? [] : [limit])];
    const rows = () => {
      const compact = fromCompactRows(this.statement(part(this.sql.compactSelect, 'e.stream = (SELECT id FROM event_streams WHERE name = ?)')).all(...params) as CompactRow[], this.forms);
      if (this.legacyHead === null || (limit !== undefined && backwards && compact.length >= limit)) return compact;
      const old = (this.statement(part('SELECT * FROM events', 'stream_id = ?')).all(...params) as LegacyRow[]).map(fromLegacyRow);
      // Every stream's first-layout events come before its compact ones.
      const all = backwards ? compact.concat(old) : old.concat(compact);
      return limit === undefined ? all : all.slice(0, limit);
    };
    if (backwards || limit !== undefined) return this.query(rows);
    // A read to the stream's end (readStream answered it already if the known head says nothing
    // follows `from`): the head it finds is remembered.
    return this.query(() => {
      const events = rows();
      this.rememberHead(streamId, events.length > 0 ? events[events.length - 1].revision : (from ?? 0) - 1);
      return events;
    });
  }

  /**
   * Forgets the known heads once another connection has committed (data_version moved). Other
   * instances in this process say so at once (the append signal); other processes' commits are
   * looked for at most every HEADS_RECHECK_MS, since the pragma costs about as much as the query
   * it saves on a busy file.
   */
  private dropHeadsIfStale(): void {
    const now = performance.now();
    if (now - this.headsCheckedAt < HEADS_RECHECK_MS) return;
    this.headsCheckedAt = now;
    const version = this.dataVersion();
    if (version === this.headsDataVersion) return;
    this.knownHeads.clear();
    this.headsDataVersion = version;
  }

  /** `bound`: no event after it reads back (retention only removes, so a bound stays one). */
  private rememberHead(streamId: string, bound: number): void {
    if (this.knownHeads.size >= MAX_INTERNED) this.knownHeads.clear();
    this.knownHeads.set(streamId, bound);
  }

  async readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    this.assertOpen();
    return this.query(() => this.readAllSync(options.after ?? null, options.maxCount, options.streams));
  }

  subscribeToAll(options: { after?: Position | null }): EventSubscription {
    this.assertOpen();
    const subscription = new SqliteSubscription({
      after: options.after ?? null,
      pageSize: this.pageSize,
      signal: this.signal,
      otherCommits: this.otherCommits,
      readPage: (after, max) => this.readForSubscription(after ?? 0, max),
      onClose: (s) => {
        this.subscriptions.delete(s);
        if (this.subscriptions.size === 0) this.otherCommits.stop();
      },
    });
    this.subscriptions.add(subscription);
    this.otherCommits.start(this.pollIntervalMs);
    return subscription;
  }

  async headPosition(): Promise<Position | null> {
    this.assertOpen();
    return this.query(() => {
      const head = (this.statement('SELECT max(position) AS position FROM event_log').get() as { position: number | null }).position;
      if (head !== null || this.legacyHead === null) return head;
      return (this.statement('SELECT max(position) AS position FROM events').get() as { position: number | null }).position;
    });
  }

  async removeEvents(streamId: string, options: { throughRevision: number; types: string[] }): Promise<{ removed: number }> {
    this.assertOpen();
    if (options.types.length === 0) return { removed: 0 };
    const removed = this.query(() => this.removeTx(streamId, options.throughRevision, options.types));
    // Parsed copies of removed events must not be handed to a subscriber again.
    if (removed > 0) this.recent.clear();
    return { removed };
  }

  /** Deletes the events, then the commits no event refers to any more (all in one transaction). */
  private removeInTransaction(streamId: string, throughRevision: number, types: string[]): number {
    const marks = types.map(() => '?').join(', ');
    const positions = this.statement(
      `DELETE FROM event_log WHERE stream = (SELECT id FROM event_streams WHERE name = ?) AND revision <= ?
       AND type IN (SELECT id FROM event_types WHERE name IN (${marks})) RETURNING position`,
    )
      .pluck()
      .all(streamId, throughRevision, ...types) as number[];
    if (positions.length > 0) {
      this.statement(
        `DELETE FROM event_commits WHERE id IN (
           SELECT DISTINCT (SELECT id FROM event_commits WHERE id <= removed.value ORDER BY id DESC LIMIT 1) FROM json_each(?) AS removed
         ) AND NOT EXISTS (
           SELECT 1 FROM event_log WHERE position >= event_commits.id
             AND position < coalesce((SELECT min(id) FROM event_commits AS later WHERE later.id > event_commits.id), 9223372036854775807)
         )`,
      ).run(JSON.stringify(positions));
    }
    // The newest event removed: its position must not be given again (see the compact layout).
    if (this.keepsFloor && positions.length > 0) {
      const newestRemoved = positions.reduce((a, b) => (a > b ? a : b));
      const head = (this.statement('SELECT max(position) FROM event_log').pluck().get() as number | null) ?? 0;
      if (head < newestRemoved) this.statement('UPDATE event_log_file SET position_floor = max(coalesce(position_floor, 0), ?) WHERE id = 1').run(newestRemoved);
    }
    let removed = positions.length;
    if (this.legacyHead !== null) {
      removed += this.statement(`DELETE FROM events WHERE stream_id = ? AND revision <= ? AND type IN (${marks})`).run(streamId, throughRevision, ...types).changes;
    }
    return removed;
  }

  /**
   * Returns the pages freed by removals to the file system (the file shrinks at the next
   * checkpoint), in slices with a turn of the event loop between (`freePagesInSlices`, as the
   * views do): retention removes an hour of checks at a time (360,000 events with 2,000
   * endpoints at 20 s), and one `incremental_vacuum` of them all held the loop meanwhile.
   */
  async reclaimSpace(): Promise<void> {
    this.assertOpen();
    if (this.query(() => this.db.pragma('auto_vacuum', { simple: true })) === 2) {
      await freePagesInSlices(this.db, () => !this.closed, (statement) => this.query(statement));
      if (this.closed) return;
    }
    if (!this.walKeeper) this.query(() => this.db.pragma('wal_checkpoint(TRUNCATE)'));
    // On the checkpoint thread, after its round: two checkpoints at once would leave this one undone.
    if (this.walKeeper) await this.walKeeper.truncate(this.busyTimeoutMs);
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
    // Appends already made are written (or refused) before the connection closes.
    this.flushPending();
    this.closed = true;
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    this.otherCommits.stop();
    this.signal.off('append', this.onAppendElsewhere);
    releaseSignal(this.signalKey);
    await this.walKeeper?.close();
    this.db.close();
  }

  private appendInTransaction(streamId: string, events: NewEvent[], expected: ExpectedRevision): AppendedEvents {
    return this.writeAppend(this.prepareAppend(streamId, events, expected));
  }

  /**
   * Everything an append decides before it writes an event: the revision check, the stored form
   * of every value (JSON, packing, metadata, timestamps) and the commit it joins. What fails here
   * (a wrong expected revision, data JSON cannot hold) leaves no event of the append written,
   * only interned names, which any later append may use: so a group commit needs no savepoint
   * per append (see `groupInTransaction`).
   */
  private prepareAppend(streamId: string, events: NewEvent[], expected: ExpectedRevision): PreparedAppend {
    const interned: AppendedEvents['interned'] = [];
    // A stream not interned yet is new (or holds only first-layout events): its row is written
    // with its first event, and it has no compact revision to look up.
    const stream = this.streamIds.get(streamId) ?? (this.statement('SELECT id FROM event_streams WHERE name = ?').pluck().get(streamId) as number | undefined) ?? null;
    const current = stream === null ? this.legacyRevision(streamId) : this.currentRevision(stream, streamId);
    if (!revisionMatches(expected, current)) throw new WrongExpectedRevisionError(streamId, expected, current);
    const now = new Date();
    const nowMs = now.getTime();
    const recordedAt = now.toISOString();
    const stored = events.map((event) => splitMetadata(event.metadata, recordedAt, event.chainHashed === true));
    const commitMetadata = stored[0].shared;
    const storedCommitMetadata = this.storedMetadata(stored[0], interned);
    // Joins the log's last commit when it is recent enough and has the same metadata, or the
    // append is a single event (which then keeps its own metadata in its row; see the layout).
    const lastCommit = this.group?.lastCommit ?? (this.statement('SELECT recorded_at, metadata FROM event_commits ORDER BY id DESC LIMIT 1').get() as StoredCommit | undefined);
    const sinceLastCommit = lastCommit === undefined ? -1 : nowMs - lastCommit.recorded_at;
    const sameMetadata = lastCommit !== undefined && lastCommit.metadata === storedCommitMetadata;
    const sharesCommit = lastCommit !== undefined && (sameMetadata || events.length === 1) && sinceLastCommit >= 0 && sinceLastCommit <= SHARED_COMMIT_MS;
    const ownMetadata = sharesCommit && !sameMetadata ? storedCommitMetadata : null;
    const storedEventId = sharesCommit ? BigInt(sinceLastCommit) : DERIVED_ID_STORED;
    const rows: PreparedRow[] = new Array(events.length);
    // The events of one append usually share occurred_at: converted once.
    let lastOccurredAt: string | null = null;
    let lastStoredOccurredAt: bigint | string | null = null;
    // The stream's constants, looked up for the first event that names keys for them.
    let constants: PreparedAppend['constants'] | undefined;
    for (let i = 0; i < events.length; i++) {
      const event = events[i];
      const split = stored[i];
      if (split.occurredAt !== lastOccurredAt) lastStoredOccurredAt = storedOccurredAt((lastOccurredAt = split.occurredAt), recordedAt, nowMs);
      let data: string | null = null;
      if (event.packed) {
        const named = event.streamConstants !== undefined && event.streamConstants.length > 0;
        if (named && constants === undefined) constants = this.constantsFor(stream, event.data, event.streamConstants!);
        data = this.packData(event.data, interned, named ? (constants?.values ?? null) : null);
      }
      rows[i] = {
        type: this.typeId(event.type, event.schemaVersion ?? 1, interned, event.packed === true),
        schemaVersion: event.schemaVersion ?? 1,
        occurredAt: lastStoredOccurredAt,
        metadata: split.shared !== commitMetadata ? this.storedMetadata(split, interned) : ownMetadata,
        data: data || JSON.stringify(event.data ?? null),
      };
    }
    return { streamId, stream, current, events, stored, rows, storedEventId, sharesCommit, storedCommitMetadata, nowMs, recordedAt, lastCommit, interned, constants: constants ?? null };
  }

  /**
   * The constants an append's records of `stream` leave out (see the layout): the stream's, or,
   * when it has none yet, the values `data` holds under `keys`, which the append then stores
   * (null: it holds none that JSON gives back exactly).
   */
  private constantsFor(stream: number | null, data: unknown, keys: readonly string[]): PreparedAppend['constants'] {
    if (stream !== null) {
      const known = this.constantsByStream.get(stream);
      if (known !== undefined) return { text: known.text, values: known.values, fixes: false };
      // Read in the append's transaction: remembered only once it commits (AppendedEvents.constants).
      const stored = this.storedConstants(stream);
      if (stored !== null) return { text: stored.text, values: stored.values, fixes: false };
    }
    const values = constantValues(data, keys);
    return values === null ? null : { text: JSON.stringify(values), values, fixes: true };
  }

  /**
   * The writes of a prepared append: its stream's row when new, its events, its commit row. A
   * failure here may leave part of the append written in the open transaction: the caller rolls
   * the transaction back (see `groupInTransaction`).
   */
  private writeAppend(prepared: PreparedAppend): AppendedEvents {
    const { streamId, events, stored, rows, storedEventId, recordedAt, interned } = prepared;
    let stream = prepared.stream;
    const constants = prepared.constants;
    if (stream === null) {
      stream = Number(this.statement('INSERT INTO event_streams (name, constants) VALUES (?, ?)').run(streamId, constants?.fixes ? constants.text : null).lastInsertRowid);
      interned.push(['stream', streamId, stream]);
    } else if (constants?.fixes && this.statement('UPDATE event_streams SET constants = ? WHERE id = ? AND constants IS NULL').run(constants.text, stream).changes !== 1) {
      // Read as NULL in this same transaction: no other connection can have set them since.
      throw new Error(`The constants of stream ${streamId} changed during its append`);
    }
    const insert = this.statement(this.sql.insert);
    const recorded: RecordedEvent[] | null = this.subscriptions.size > 0 ? [] : null;
    // A shape interned by this append, or the constants it fixed, are not cached for reads before it commits.
    const appendedStream = stream;
    const formsInAppend: StoredForms | null =
      recorded === null
        ? null
        : {
            ...this.forms,
            keysOfShape: (id: number): string[] => {
              const mine = interned.find(([kind, , shape]) => kind === 'shape' && shape === id);
              return mine ? (JSON.parse(mine[1]) as string[]) : this.keysOfShape(id);
            },
            constantsOf: (id: number) => (id === appendedStream ? (constants?.values ?? null) : this.constantsOf(id)),
          };
    let revision = prepared.current;
    let first = 0;
    let last = 0;
    // After a removal took the newest event, the first event goes after the position it had.
    const floor = this.keepsFloor && this.group?.floorClear !== true ? (this.statement('SELECT position_floor FROM event_log_file WHERE id = 1').pluck().get() as number | null) : null;
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      revision += 1;
      // The row's values in the insert's column order (a file before kinds has schema_version).
      const values = this.kinds
        ? [stream, revision, row.type, storedEventId, row.occurredAt, row.metadata, row.data, stored[i].hash]
        : [stream, revision, row.type, row.schemaVersion, storedEventId, row.occurredAt, row.metadata, row.data, stored[i].hash];
      const info = i === 0 && floor !== null ? this.insertAfterFloor(floor, values) : insert.run(...values);
      last = Number(info.lastInsertRowid);
      if (i === 0) first = last;
      recorded?.push({
        id: derivedId(this.forms.idHead, last),
        streamId,
        type: events[i].type,
        schemaVersion: row.schemaVersion,
        data: parseStored(row.data, formsInAppend!, stream),
        // As a read gives it, from the fields the stored metadata was written from.
        metadata: withHash(joinMetadata(stored[i].fields, stored[i].occurredAt), stored[i].hash),
        revision,
        position: last,
        recordedAt,
      });
    }
    if (!prepared.sharesCommit) this.statement('INSERT INTO event_commits (id, recorded_at, metadata) VALUES (?, ?, ?)').run(first, prepared.nowMs, prepared.storedCommitMetadata);
    if (this.group !== null) {
      this.group.lastCommit = prepared.sharesCommit ? prepared.lastCommit! : { recorded_at: prepared.nowMs, metadata: prepared.storedCommitMetadata };
      this.group.floorClear = true;
    }
    return {
      result: { nextExpectedRevision: revision, position: last },
      events: recorded,
      interned,
      constants: constants === null ? null : { stream, text: constants.text, values: constants.values },
    };
  }

  /** Inserts an event at the position after the floor (or after the newest event, if later) and clears the floor. */
  private insertAfterFloor(floor: number, columns: unknown[]): Database.RunResult {
    const head = (this.statement('SELECT max(position) FROM event_log').pluck().get() as number | null) ?? 0;
    const info = this.statement(this.sql.insertAt).run(Math.max(floor, head) + 1, ...columns);
    this.statement('UPDATE event_log_file SET position_floor = NULL WHERE id = 1').run();
    return info;
  }

  /** The stream's last revision, -1 when it has none (its first-layout events count). */
  private currentRevision(stream: number, streamId: string): number {
    const compact = (this.statement('SELECT max(revision) AS revision FROM event_log WHERE stream = ?').get(stream) as { revision: number | null }).revision;
    if (compact !== null) return compact;
    return this.legacyRevision(streamId);
  }

  /** The last revision of a stream's first-layout events, -1 when it has none. */
  private legacyRevision(streamId: string): number {
    if (this.legacyHead === null) return -1;
    return (this.statement('SELECT max(revision) AS revision FROM events WHERE stream_id = ?').get(streamId) as { revision: number | null }).revision ?? -1;
  }

  /** The id of a stream or type name or a shape's key list, inserted when new (inside the append's transaction). */
  private intern(kind: InternKind, name: string, interned: AppendedEvents['interned']): number {
    const cache = this.internCache(kind);
    const known = cache.get(name) ?? interned.find(([k, n]) => k === kind && n === name)?.[2];
    if (known !== undefined) return known;
    const [table, column] = kind === 'stream' ? ['event_streams', 'name'] : kind === 'type' ? ['event_types', 'name'] : kind === 'shape' ? ['event_shapes', 'keys'] : ['event_texts', 'text'];
    const found = this.statement(`SELECT id FROM ${table} WHERE ${column} = ?`).pluck().get(name) as number | undefined;
    const id = found ?? Number(this.statement(`INSERT INTO ${table} (${column}) VALUES (?)`).run(name).lastInsertRowid);
    interned.push([kind, name, id]);
    return id;
  }

  /**
   * The id `type` stores: of the type's name, or in a file of kinds (see the layout) of the name
   * and the schema version together, interned under `version name`.
   */
  private typeId(name: string, schemaVersion: number, interned: AppendedEvents['interned'], packed = false): number {
    if (!this.kinds) return this.intern('type', name, interned);
    // Committed kinds by name, then version: no key string made per event.
    const committed = this.kindIds.get(name)?.get(schemaVersion);
    if (committed !== undefined) return committed;
    const key = `${schemaVersion} ${name}`;
    const known = interned.find(([k, n]) => k === 'type' && n === key)?.[2];
    if (known !== undefined) return known;
    const found = this.statement('SELECT id FROM event_types WHERE name = ? AND schema_version = ?').pluck().get(name, schemaVersion) as number | undefined;
    const id = found ?? this.newKind(name, schemaVersion, packed);
    interned.push(['type', key, id]);
    return id;
  }

  /**
   * A kind's new id. The file's first kind of packed records (a probed check's in practice:
   * most of the log) takes 0, which SQLite keeps in the row's header byte alone (ids from 2 on
   * take a byte): a byte less on most rows (issue 31, session 20). Any version reads it (an id
   * like any other); a file whose checks were interned before keeps their id until their kind
   * changes version.
   */
  private newKind(name: string, schemaVersion: number, packed: boolean): number {
    if (packed && this.statement('INSERT INTO event_types (id, name, schema_version) SELECT 0, ?, ? WHERE NOT EXISTS (SELECT 1 FROM event_types WHERE id = 0)').run(name, schemaVersion).changes === 1) return 0;
    return Number(this.statement('INSERT INTO event_types (name, schema_version) VALUES (?, ?)').run(name, schemaVersion).lastInsertRowid);
  }

  private internCache(kind: InternKind): Map<string, number> {
    return kind === 'stream' ? this.streamIds : kind === 'type' ? this.typeIds : kind === 'shape' ? this.shapeIds : this.textIds;
  }

  /**
   * Metadata JSON as stored: naming only its actor (a system component's appends), interned (a
   * handful of texts for the whole log); any other object packed.
   */
  private storedMetadata({ shared, fields }: SplitMetadata, interned: AppendedEvents['interned']): string {
    const keys = Object.keys(fields);
    if (keys.length === 1 && keys[0] === 'actor') return INTERNED + this.intern('text', shared, interned);
    // A non-empty object packed (see the compact layout); `{}` as it is.
    return this.packValue(fields, interned) ?? shared;
  }

  /** The packed text of a plain object, null for anything else (see `recordOf`). */
  private packValue(value: unknown, interned: AppendedEvents['interned']): string | null {
    const values = this.recordOf(value, interned);
    return values === null ? null : PACKED + JSON.stringify(values);
  }

  /**
   * The stored form of `data` an append marks as packed: the coded record when every value is
   * one `record-codec.ts` gives back exactly as JSON does (null, a boolean, a finite number, a
   * string without a lone surrogate or U+0000), else the packed text, else null (not a plain
   * object).
   */
  private packData(value: unknown, interned: AppendedEvents['interned'], constants: Readonly<Record<string, unknown>> | null): string | null {
    const values = this.recordOf(value, interned, constants);
    if (values === null) return null;
    const coded = encodeRecord(values);
    // Packed text keeps every value (only coded records leave the stream's constants out).
    if (coded === null) return PACKED + JSON.stringify(constants === null ? values : this.recordOf(value, interned, null));
    const shape = values[0] as number;
    // A shape of 1-20 is coded as one character (record-codec.ts: 0-79 are), which the mark replaces.
    return shape <= SHAPED_CODED_LAST - SHAPED_CODED_BASE ? String.fromCharCode(SHAPED_CODED_BASE + shape) + coded.slice(1) : CODED + coded;
  }

  /**
   * `[shape, value, ...]` of a plain object, its key list interned; null for anything else.
   * Built straight from the value: its keys are those JSON.stringify keeps (not undefined,
   * functions or symbols), so the rebuilt object's JSON is the object's JSON.
   */
  private recordOf(value: unknown, interned: AppendedEvents['interned'], constants: Readonly<Record<string, unknown>> | null = null): unknown[] | null {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || typeof (value as { toJSON?: unknown }).toJSON === 'function') return null;
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).filter((key) => {
      const v = record[key];
      return v !== undefined && typeof v !== 'function' && typeof v !== 'symbol';
    });
    // `__proto__` would not come back as an own key when the object is rebuilt.
    if (keys.length === 0 || keys.includes('__proto__')) return null;
    const shape = this.intern('shape', JSON.stringify(keys), interned);
    if (constants !== null) return valuesBesideConstants(shape, record, keys, constants);
    const values: unknown[] = new Array(keys.length + 1);
    values[0] = shape;
    for (let i = 0; i < keys.length; i++) values[i + 1] = record[keys[i]];
    return values;
  }

  private remember(cache: Map<string, number>, name: string, id: number): void {
    if (cache.size >= MAX_INTERNED) cache.clear();
    cache.set(name, id);
  }

  /** A committed kind, interned as `version name` (see `typeId`). */
  private rememberKind(key: string, id: number): void {
    const space = key.indexOf(' ');
    const name = key.slice(space + 1);
    if (this.kindIds.size >= MAX_INTERNED) this.kindIds.clear();
    let versions = this.kindIds.get(name);
    if (versions === undefined) this.kindIds.set(name, (versions = new Map()));
    versions.set(Number(key.slice(0, space)), id);
  }

  private readAllSync(after: Position | null, maxCount: number, streams?: StreamSelection): RecordedEvent[] {
    const from = after ?? 0;
    const old = this.legacyHead !== null && from < this.legacyHead ? this.readLegacyPage(from, maxCount, streams) : [];
    if (old.length >= maxCount) return old;
    const compact = streams === undefined ? this.readCompactPage(from, maxCount - old.length) : this.readSelectedPage(from, maxCount - old.length, streams);
    return old.length === 0 ? compact : old.concat(compact);
  }

  /** A page of the first layout, whose rows name their stream. */
  private readLegacyPage(after: Position, maxCount: number, streams: StreamSelection | undefined): RecordedEvent[] {
    if (streams === undefined) return (this.statement('SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?').all(after, maxCount) as LegacyRow[]).map(fromLegacyRow);
    const [operator, names] = 'only' in streams ? ['IN', streams.only] : ['NOT IN', streams.except];
    const sql = `SELECT * FROM events WHERE position > ? AND +stream_id ${operator} (SELECT value FROM json_each(?)) ORDER BY position LIMIT ?`;
    return (this.statement(sql).all(after, JSON.stringify([...names]), maxCount) as LegacyRow[]).map(fromLegacyRow);
  }

  /**
   * A page of the compact layout: the event rows, then the commits they belong to in one query
   * (the commit at or below the first position, and every one up to the last), walked beside the
   * rows. Rows come as arrays: better-sqlite3 builds an object per row otherwise, which cost
   * about as much as the query. The same events as `compactSelect` gives, at about half the CPU.
   */
  private readCompactPage(after: Position, maxCount: number): RecordedEvent[] {
    const rows = this.rawStatement(this.sql.pageSelect).all(after, maxCount) as PageRow[];
    if (rows.length === 0) return [];
    const commits = this.rawStatement(PAGE_COMMITS).all(rows[0][0], rows[rows.length - 1][0]) as CommitRow[];
    return this.pageEvents(rows, commits);
  }

  /**
   * A page of the compact layout's rows of the selected streams only (`ReadAllOptions.streams`):
   * the other rows are skipped by the query, never read into JavaScript nor decoded.
   */
  private readSelectedPage(after: Position, maxCount: number, streams: StreamSelection): RecordedEvent[] {
    const [sql, names] = 'only' in streams ? [this.sql.selectedPageSelects.only, streams.only] : [this.sql.selectedPageSelects.except, streams.except];
    const ids = names.size === 0 ? [] : this.statement(STREAM_IDS).pluck().all(JSON.stringify([...names]));
    const rows = this.rawStatement(sql).all(after, JSON.stringify(ids), maxCount) as SelectedPageRow[];
    if (rows.length === 0) return [];
    const commitIds = [...new Set(rows.map((row) => row[11]))];
    return this.pageEvents(rows, this.rawStatement(COMMITS_BY_ID).all(JSON.stringify(commitIds)) as CommitRow[]);
  }

  /** The events of a page's rows, each given the metadata and time of its commit (`commits` in id order, each row's among them). */
  private pageEvents(rows: (PageRow | SelectedPageRow)[], commits: CommitRow[]): RecordedEvent[] {
    const toEvent = compactEvents(this.forms);
    return withCommits(rows, commits, (row, commit) => toEvent(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7] ?? commit[2], row[8], row[9], commit[1], row[10]));
  }

  /** A cached statement returning each row as an array of its columns. */
  private rawStatement(sql: string): Database.Statement {
    let stmt = this.rawStatements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql).raw(true);
      this.rawStatements.set(sql, stmt);
    }
    return stmt;
  }

  /**
   * Subscriptions read through the shared stretch of recent events. The log is queried only
   * when the stretch may be short: another connection committed since it last reached the head
   * (data_version moved), or the reader is outside it (catching up).
   */
  private readForSubscription(after: Position, max: number): RecordedEvent[] {
    const cached = this.recent.after(after, max);
    if (cached !== null && cached.length === max) return cached;
    const version = this.recentDataVersionNow();
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

  /**
   * data_version for subscriptions at the head, read at most once per HEADS_RECHECK_MS: every
   * live subscription (a dozen per process) asks after each append, and the pragma costs as much
   * as the query it saves. Another process's append is found by polling anyway; a version a
   * millisecond old delays it by as much.
   */
  private recentDataVersionNow(): number {
    const now = performance.now();
    if (this.subscriptionVersion === null || now - this.subscriptionVersion.at >= HEADS_RECHECK_MS) {
      this.subscriptionVersion = { at: now, version: this.dataVersion() };
    }
    return this.subscriptionVersion.version;
  }

  /** Moves whenever another connection commits to the file (never for this connection's own commits). */
  private dataVersion(): number {
    return this.statement('PRAGMA data_version').pluck().get() as number;
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

/** The first layout's metadata column. */
function readMetadata(text: string): EventMetadata {
  const stored = JSON.parse(text) as Partial<EventMetadata>;
  return { actor: null, request_id: null, correlation_id: null, causation_id: null, ...stored } as EventMetadata;
}

/**
 * Metadata as stored, split: what events of one append usually share (JSON without occurred_at
 * and hash; null fields left out, as checks are most of the log and most of their metadata is
 * null, and put back as null on read; `fields` is the object that JSON was written from),
 * occurred_at, and the chain hash for the `hash` column (its hex text, stored as its bytes; a hash
 * that is not 64 or 16 lowercase hex digits stays in the JSON, so it reads back as it was given). Built
 * field by field, in the order `joinMetadata` reads: it runs for every event.
 */
interface SplitMetadata {
  shared: string;
  fields: Partial<EventMetadata>;
  occurredAt: string;
  hash: string | null;
}

function splitMetadata(input: Partial<EventMetadata> | undefined, now: string, chainHashed: boolean): SplitMetadata {
  const shared: Partial<EventMetadata> = {};
  if (input) {
    if (input.actor != null) shared.actor = input.actor;
    if (input.request_id != null) shared.request_id = input.request_id;
    if (input.correlation_id != null) shared.correlation_id = input.correlation_id;
    if (input.causation_id != null) shared.causation_id = input.causation_id;
    if (input.idempotency_key != null) {
      shared.idempotency_key = input.idempotency_key;
      shared.idempotency_step = input.idempotency_step ?? 0;
    }
    if (input.prev_hash != null) shared.prev_hash = input.prev_hash;
  }
  const hash = input?.hash;
  // The chained store's own hashes are lowercase hex as computed; any other is checked (a
  // different form is kept as given in the metadata JSON, so it reads back unchanged).
  // Full hashes (64 hex digits) and the 16-digit prefixes most chained events store (docs/audit.md).
  const binary = hash != null && (hash.length === 64 || hash.length === 16) && (chainHashed || !NOT_HEX.test(hash));
  if (hash != null && !binary) shared.hash = hash;
  return { shared: JSON.stringify(shared), fields: shared, occurredAt: input?.occurred_at ?? now, hash: binary ? hash : null };
}

/** A hash of 64 characters none of which matches this is 64 lowercase hex digits (a search for one bad character costs about half an anchored /^[0-9a-f]{64}$/). */
const NOT_HEX = /[^0-9a-f]/;

/** The chain hash of the `hash` column (its hex as read, `READ_HASH`, or the hex text an append stored) back in the metadata. */
function withHash(metadata: EventMetadata, hash: string | null): EventMetadata {
  if (hash !== null) metadata.hash = hash;
  return metadata;
}

/**
 * The metadata `readMetadata` would give for the stored form split by `splitMetadata`, in the
 * same key order (the stored fields are those of `completeMetadata`, nothing else).
 */
function joinMetadata(shared: Partial<EventMetadata>, occurredAt: string): EventMetadata {
  const metadata: EventMetadata = {
    actor: shared.actor ?? null,
    request_id: shared.request_id ?? null,
    correlation_id: shared.correlation_id ?? null,
    causation_id: shared.causation_id ?? null,
    occurred_at: occurredAt,
  };
  if (shared.idempotency_key !== undefined) {
    metadata.idempotency_key = shared.idempotency_key;
    metadata.idempotency_step = shared.idempotency_step;
  }
  if (shared.prev_hash !== undefined) metadata.prev_hash = shared.prev_hash;
  if (shared.hash !== undefined) metadata.hash = shared.hash;
  return metadata;
}

/**
 * occurred_at as the compact layout keeps it: NULL when it is recorded_at, else ms before it (an
 * integer: bound as a bigint, or the column would keep an 8-byte REAL), or the text itself when
 * not canonical. Reads get a number either way.
 */
function storedOccurredAt(occurredAt: string, recordedAt: string, recordedMs: number): bigint | string | null {
  if (occurredAt === recordedAt) return null;
  const ms = Date.parse(occurredAt);
  return Number.isFinite(ms) && new Date(ms).toISOString() === occurredAt ? BigInt(recordedMs - ms) : occurredAt;
}

function readOccurredAt(stored: number | string | null, recordedMs: number, recordedAt: string): string {
  if (stored === null) return recordedAt;
  return typeof stored === 'number' ? new Date(recordedMs - stored).toISOString() : stored;
}

/**
 * How long after a commit an append with the same metadata may still join it (see the compact
 * layout): the largest offset a two-byte integer holds. An append later than that starts a commit
 * of its own, so an event's offset never takes more than two bytes.
 */
const SHARED_COMMIT_MS = 32_767;

/**
 * Bound as a 64-bit integer: better-sqlite3 binds a JS number as a REAL, which a column without
 * integer affinity (event_id, occurred_at) keeps as 8 bytes; the integer 0 takes none.
 */
const DERIVED_ID_STORED = 0n;

/** The id of the event at `position`: the file's prefix, then the position as 12 hex digits (6 bytes: 2^48 positions). */
function derivedId(idHead: string, position: number): string {
  return idHead + position.toString(16).padStart(12, '0');
}

/** An integer `event_id` is a derived id (its value: ms after the commit); anything else is the id stored. */
function uuidText(stored: Buffer | string | number, position: number, idHead: string): string {
  if (typeof stored === 'number') return derivedId(idHead, position);
  if (typeof stored === 'string') return stored;
  const hex = stored.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function fromLegacyRow(row: LegacyRow): RecordedEvent {
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

/** Turns compact rows into events. */
function fromCompactRows(rows: CompactRow[], forms: StoredForms): RecordedEvent[] {
  const toEvent = compactEvents(forms);
  return rows.map((row) =>
    toEvent(row.position, row.stream_id, row.revision, row.type, row.schema_version, row.event_id, row.occurred_at, row.metadata ?? row.commit_metadata, row.data, row.hash, row.recorded_at, row.stream),
  );
}

/**
 * A page's events, each built from its row and the commit it belongs to: the rows and the commits
 * are both in position order, so one walk pairs them.
 */
function withCommits<Row extends readonly [number, ...unknown[]]>(rows: Row[], commits: CommitRow[], toEvent: (row: Row, commit: CommitRow) => RecordedEvent): RecordedEvent[] {
  const events = new Array<RecordedEvent>(rows.length);
  let next = 0;
  for (let i = 0; i < rows.length; i++) {
    const position = rows[i][0];
    while (next < commits.length && commits[next][0] <= position) next++;
    if (next === 0) throw new Error(`The event log holds no commit for the event at position ${position}`);
    events[i] = toEvent(rows[i], commits[next - 1]);
  }
  return events;
}

/**
 * Builds the events of one read from their stored columns (`metadata`: the event's own, else its
 * commit's). The events of one commit share its metadata text and recorded_at: each is parsed or
 * formatted once per run of events that share it.
 */
function compactEvents(forms: StoredForms) {
  let metadataText: string | null = null;
  let metadata: Partial<EventMetadata> = {};
  let recordedMs = Number.NaN;
  let recordedAt = '';
  return (
    position: number,
    streamId: string,
    revision: number,
    type: string,
    schemaVersion: number,
    eventId: Buffer | string | number,
    occurredAt: number | string | null,
    metadataStored: string,
    data: string,
    hash: string | null,
    recordedAtMs: number,
    stream: number,
  ): RecordedEvent => {
    if (metadataStored !== metadataText) {
      metadataText = metadataStored;
      metadata = parseStored(metadataStored, forms) as Partial<EventMetadata>;
    }
    // An event that joined an earlier append's commit was recorded `event_id` ms after it.
    const ms = typeof eventId === 'number' ? recordedAtMs + eventId : recordedAtMs;
    if (ms !== recordedMs) {
      recordedMs = ms;
      recordedAt = new Date(recordedMs).toISOString();
    }
    return {
      id: uuidText(eventId, position, forms.idHead),
      streamId,
      type,
      schemaVersion,
      data: parseStored(data, forms, stream),
      metadata: withHash(joinMetadata(metadata, readOccurredAt(occurredAt, recordedMs, recordedAt)), hash),
      revision,
      position,
      recordedAt,
    };
  };
}

/**
 * A stored `data` or `metadata` column: packed and coded records rebuilt with their keys in
 * order (a coded record's left-out keys from the constants of its stream, `stream`: see the layout),
 * interned texts looked up, anything else parsed. JSON.stringify never writes a control
 * character first: one this version does not know is a later version's form, refused.
 */
function parseStored(stored: string, forms: StoredForms, stream: number | null = null): unknown {
  if (typeof stored !== 'string') throw new Error('The event log holds a value in a stored form this version does not know (a blob)');
  const mark = stored.charCodeAt(0);
  if (mark > 3) {
    if (mark >= 0x20) return JSON.parse(stored);
    if (mark <= SHAPED_CODED_LAST) return recordOfShape(mark - SHAPED_CODED_BASE, decodeRecord(stored, 1), 0, forms, stream);
    throw new Error(`The event log holds a value in a stored form this version does not know (it starts with U+${mark.toString(16).padStart(4, '0')})`);
  }
  if (mark === 3) return recordOfShape(null, decodeRecord(stored, 1), 1, forms, stream);
  if (mark === 2) return JSON.parse(forms.textOf(Number(stored.slice(1))));
  if (mark === 1) return recordOfShape(null, JSON.parse(stored.slice(1)) as unknown[], 1, forms, null);
  throw new Error(`The event log holds a value in a stored form this version does not know (${stored.length === 0 ? 'an empty text' : 'it starts with U+0000'})`);
}

/**
 * The object of a packed record: `values` from `first` on under the keys of `shape`, or, when
 * `shape` is null, of `values[0]` (`[shape, value, ...]`). A record short of m values left out
 * the first m of the constant keys of its stream (`stream`; see the layout).
 */
function recordOfShape(shape: number | null, values: unknown[], first: number, forms: StoredForms, stream: number | null): Record<string, unknown> {
  const id = shape ?? (values[0] as number);
  const keys = forms.keysOfShape(id);
  const record: Record<string, unknown> = {};
  let leftOut = keys.length - (values.length - first);
  if (leftOut === 0) {
    for (let i = 0; i < keys.length; i++) record[keys[i]] = values[i + first];
    return record;
  }
  const constants = leftOut > 0 && stream !== null ? forms.constantsOf(stream) : null;
  let at = first;
  if (constants !== null) {
    // The first m of the stream's constant keys, in their stored order, that the shape holds.
    const omitted: string[] = [];
    for (const key in constants) {
      if (leftOut === 0) break;
      if (keys.includes(key)) {
        omitted.push(key);
        leftOut--;
      }
    }
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      record[key] = omitted.includes(key) ? constants[key] : values[at++];
    }
  }
  if (constants === null || leftOut !== 0 || at !== values.length) throw new Error(`The event log holds a record of ${values.length - first} values for shape ${String(id)}, which has ${keys.length} keys`);
  return record;
}

/**
 * `[shape, value, ...]` of a record whose stream has `constants` (see the layout): the values of
 * its keys in order, without those of the first constant keys (in the constants' order) whose
 * values equal the stream's.
 */
function valuesBesideConstants(shape: number, record: Record<string, unknown>, keys: string[], constants: Readonly<Record<string, unknown>>): unknown[] {
  // The stream's constant keys in their stored order, up to the first the record holds with
  // another value (one its shape does not hold is passed over).
  const omitted: string[] = [];
  for (const key in constants) {
    if (!keys.includes(key)) continue;
    if (record[key] !== constants[key]) break;
    omitted.push(key);
  }
  const values: unknown[] = [shape];
  for (let i = 0; i < keys.length; i++) if (!omitted.includes(keys[i])) values.push(record[keys[i]]);
  return values;
}

/**
 * A stream's constants from its first record that names them: the values `record` holds under
 * `keys` that JSON gives back as they are (null, booleans, finite numbers, strings); null when
 * it holds none.
 */
function constantValues(record: unknown, keys: readonly string[]): Record<string, unknown> | null {
  if (record === null || typeof record !== 'object') return null;
  const fields = record as Record<string, unknown>;
  const values: Record<string, unknown> = {};
  let any = false;
  for (const key of keys) {
    if (key === '__proto__' || !Object.hasOwn(fields, key)) continue;
    const value = fields[key];
    if (value === null || typeof value === 'boolean' || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))) {
      values[key] = value;
      any = true;
    }
  }
  return any ? values : null;
}

function isSqliteCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}

/** An append waiting for its group commit. */
interface PendingAppend {
  streamId: string;
  events: NewEvent[];
  expected: ExpectedRevision;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
}

/** An append of a group failed after its first write: the group's transaction is rolled back and written again without it. */
class PartlyWritten extends Error {
  constructor(
    readonly index: number,
    override readonly cause: unknown,
  ) {
    super('An append of the group failed part-way');
  }
}

/** What the caller of a failed append is told: a taken revision is a wrong expected revision. */
function appendError(error: unknown, { streamId, expected }: PendingAppend): unknown {
  if (isSqliteCode(error, 'SQLITE_CONSTRAINT_UNIQUE') || isSqliteCode(error, 'SQLITE_CONSTRAINT_PRIMARYKEY')) {
    return new WrongExpectedRevisionError(streamId, expected, null);
  }
  return toStoreError(error);
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

/**
 * The poll for other connections' commits shared by a store's subscriptions: one timer while
 * anyone is subscribed; each tick reads data_version once and wakes the waiting subscriptions
 * only when it moved. `seen` counts the moves, so a subscription that read its page before a
 * move it was not yet waiting for reads again instead of sleeping through it.
 */
class OtherCommits {
  private timer: NodeJS.Timeout | null = null;
  private version: number | null = null;
  private readonly waiting = new Set<() => void>();
  /** How many times the version was seen to move. */
  seen = 0;

  constructor(
    private readonly read: () => number,
    private readonly onMove: (version: number) => void,
  ) {}

  start(intervalMs: number): void {
    if (this.timer) return;
    this.version = this.readSafely();
    this.timer = setInterval(() => this.tick(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Calls `wake` after the next move; returns the cancel. */
  wait(wake: () => void): () => void {
    this.waiting.add(wake);
    return () => this.waiting.delete(wake);
  }

  private tick(): void {
    const version = this.readSafely();
    if (version === null || version === this.version) return;
    this.version = version;
    this.seen++;
    this.onMove(version);
    for (const wake of [...this.waiting]) wake();
  }

  /** null when the file cannot be read right now (closing, busy): the next tick looks again. */
  private readSafely(): number | null {
    try {
      return this.read();
    } catch {
      return null;
    }
  }
}

interface SubscriptionSource {
  after: Position | null;
  pageSize: number;
  signal: EventEmitter;
  otherCommits: OtherCommits;
  readPage(after: Position | null, maxCount: number): RecordedEvent[];
  onClose(subscription: SqliteSubscription): void;
}

/** Catches up page by page, then sleeps until an append signal, another connection's commit or close(). */
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
        const seen = this.source.otherCommits.seen;
        const page = this.source.readPage(after, this.source.pageSize);
        for (const event of page) {
          if (this.closed) return;
          yield event;
          after = event.position;
        }
        const moved = this.source.otherCommits.seen !== seen;
        if (page.length < this.source.pageSize && !this.closed && !this.appendedSinceRead && !moved) await this.waitForAppend();
      }
    } finally {
      this.source.signal.off('append', this.onAppend);
      await this.close();
    }
  }

  private waitForAppend(): Promise<void> {
    return new Promise<void>((done) => {
      const finish = (): void => {
        cancel();
        this.wake = null;
        done();
      };
      const cancel = this.source.otherCommits.wait(finish);
      this.wake = finish;
    });
  }
}
