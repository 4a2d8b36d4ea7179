/**
 * How one collection's table stores its documents, read back from the table's own schema (so a
 * process that never ensured the collection, or a file written by older code, reads it right).
 *
 * - JSON layout (every collection created before typed columns, and collections that declare
 *   none): `(id TEXT PRIMARY KEY, doc BLOB)`, the whole document as JSONB.
 * - Typed layout (`CollectionSpec.columns`): one column per declared field, the other fields in
 *   `"$rest"` (JSONB, NULL when there are none). Declared types: INTEGER, REAL, TEXT, BOOLEAN
 *   (0/1), TIMESTAMP (epoch ms, read back as `new Date(ms).toISOString()`). A NULL column is a
 *   null field, unless `"$rest"` lists the field under `$absent` (the document did not have it).
 *   `id` declared integer is the rowid (`INTEGER PRIMARY KEY`, no separate key index); a text id
 *   makes the table WITHOUT ROWID (keyed by id, again no separate key index): 20,000 rollup-like
 *   rows with text ids took 60 bytes a row that way, 100 with a rowid and the id's own index.
 * - Id field (`CollectionSpec.idField`, integer ids only): the field whose decimal string the id is
 *   is not stored again. The table names it as a virtual column generated from `id` (no bytes in
 *   the row; it marks the layout for processes that read the table's schema), and queries read
 *   the field as `id` itself, so it compares and sorts as an integer through the rowid and an
 *   index need not end with it (every entry of a rowid table's index ends with the rowid): a
 *   check's id and `check_id` took 8 bytes a check twice over, in the row and in the list's index.
 */
import type { ColumnType, Doc } from '../read-store.port.js';
import { assertFieldName, canonicalTimestampMs, integerIdValue } from '../read-store-rules.js';

export type FieldKind = 'json' | 'id' | 'integer_id' | ColumnType;

/** How a query reads one field. */
export interface FieldRef {
  field: string;
  kind: FieldKind;
  /** The SQL value: the column, or json_extract over the JSON column. */
  expr: string;
  /** JSON fields: the column holding the document. */
  doc: string;
}

export const REST_COLUMN = '"$rest"';
const ABSENT = '$absent';

const SQL_TYPES: Record<ColumnType, string> = { integer: 'INTEGER', real: 'REAL', text: 'TEXT', boolean: 'BOOLEAN', timestamp: 'TIMESTAMP' };
const COLUMN_TYPES_BY_SQL = new Map(Object.entries(SQL_TYPES).map(([type, sql]) => [sql, type as ColumnType]));

export class CollectionLayout {
  private readonly refs = new Map<string, FieldRef>();
  readonly typed: boolean;
  readonly docColumn: string;
  /** The id, the id field and every column: what `toRow` keeps out of `"$rest"` (built once, not per row). */
  private readonly declared: ReadonlySet<string>;
  /**
   * Typed columns some index of the table is built on (read from the schema with the layout): an
   * update that leaves them as they are need not touch any index (`WriteSql.updateKept`).
   */
  indexedColumns: ReadonlySet<string> = new Set();

  constructor(
    /** Declared fields other than id, in table order; empty for the JSON layout. */
    readonly columns: ReadonlyArray<readonly [string, ColumnType]>,
    readonly integerId: boolean,
    typed: boolean,
    /** Whether documents get the undeclared fields kept in `"$rest"` (false for `only`'s layouts). */
    private readonly withRest = true,
    /** The id field (`CollectionSpec.idField`): read as the integer key, not a column of its own. */
    readonly idField: string | null = null,
  ) {
    this.typed = typed;
    this.docColumn = typed ? REST_COLUMN : 'doc';
    this.declared = new Set(['id', ...(idField === null ? [] : [idField]), ...columns.map(([name]) => name)]);
  }

  static json(): CollectionLayout {
    return new CollectionLayout([], false, false);
  }

  /**
   * From `PRAGMA table_xinfo` rows (`hidden` 2 or 3: a generated column, which in a typed table
   * is the id field); null when the table does not exist.
   */
  static fromTableInfo(rows: Array<{ name: string; type: string; hidden?: number }>): CollectionLayout | null {
    if (rows.length === 0) return null;
    if (!rows.some((r) => r.name === '$rest')) return CollectionLayout.json();
    const integerId = rows.find((r) => r.name === 'id')?.type.toUpperCase() === 'INTEGER';
    const generated = (r: { hidden?: number }) => r.hidden === 2 || r.hidden === 3;
    const idField = integerId ? (rows.find(generated)?.name ?? null) : null;
    const columns = rows
      .filter((r) => r.name !== 'id' && r.name !== '$rest' && !generated(r))
      .map((r) => [r.name, COLUMN_TYPES_BY_SQL.get(r.type.toUpperCase()) ?? 'text'] as const);
    return new CollectionLayout(columns, integerId, true, true, idField);
  }

  /** CREATE TABLE for a new typed collection (`idField`: see the layouts above). */
  static createTypedSql(table: string, columns: Record<string, ColumnType>, idField?: string): string {
    const integerId = columns.id === 'integer';
    const defs = Object.entries(columns)
      .filter(([field]) => field !== 'id' && field !== idField)
      .map(([field, type]) => `"${field}" ${SQL_TYPES[type]}`);
    const id = integerId ? 'id INTEGER PRIMARY KEY' : 'id TEXT PRIMARY KEY NOT NULL';
    const alias = integerId && idField !== undefined ? [`"${idField}" INTEGER GENERATED ALWAYS AS (id) VIRTUAL`] : [];
    return `CREATE TABLE ${table} (${[id, ...defs, `${REST_COLUMN} BLOB`, ...alias].join(', ')})${integerId ? '' : ' WITHOUT ROWID'}`;
  }

  /**
   * Reads of `fields` alone (`FindQuery.fields`): a layout selecting and returning only those
   * declared columns (and id); null when one of them is not a typed column.
   */
  only(fields: readonly string[]): CollectionLayout | null {
    if (!this.typed) return null;
    const wanted = new Set(fields);
    wanted.delete('id');
    if (this.idField !== null) wanted.delete(this.idField);
    const columns = this.columns.filter(([name]) => wanted.has(name));
    if (columns.length !== wanted.size) return null;
    return new CollectionLayout(columns, this.integerId, true, false, this.idField);
  }

  field(field: string): FieldRef {
    let ref = this.refs.get(field);
    if (ref === undefined) {
      assertFieldName(field);
      const column = this.columns.find(([name]) => name === field);
      if (field === 'id') ref = { field, kind: this.integerId ? 'integer_id' : 'id', expr: 'id', doc: this.docColumn };
      else if (field === this.idField) ref = { field, kind: 'integer', expr: 'id', doc: this.docColumn };
      else if (column) ref = { field, kind: column[1], expr: `"${field}"`, doc: this.docColumn };
      else ref = { field, kind: 'json', expr: `json_extract(${this.docColumn}, '$.${field}')`, doc: this.docColumn };
      this.refs.set(field, ref);
    }
    return ref;
  }

  /** The columns a read selects, in the order `toDoc` expects them. */
  selectList(): string {
    if (!this.typed) return 'json(doc)';
    return ['id', ...this.columns.map(([name]) => `"${name}"`), `json(${REST_COLUMN})`].join(', ');
  }

  /** The id as the table stores it, or null when this id cannot be in the table. */
  storedId(id: string): string | number | null {
    if (!this.integerId) return id;
    return integerIdValue(id);
  }

  /** A row selected with `selectList` (raw mode for typed layouts) as the document that was written. */
  toDoc(row: unknown): Doc {
    if (!this.typed) return JSON.parse(row as string) as Doc;
    const values = row as unknown[];
    const restText = values[values.length - 1] as string | null;
    const rest = restText === null ? null : (JSON.parse(restText) as Record<string, unknown>);
    const absent = (rest?.[ABSENT] as string[] | undefined) ?? null;
    const doc: Doc = { id: this.integerId ? String(values[0]) : (values[0] as string) };
    if (this.idField !== null) doc[this.idField] = values[0];
    this.columns.forEach(([name, type], i) => {
      const value = values[i + 1];
      if (value === null) {
        if (absent === null || !absent.includes(name)) doc[name] = null;
      } else doc[name] = fromColumn(type, value);
    });
    if (rest && this.withRest) {
      for (const key of Object.keys(rest)) if (key !== ABSENT) doc[key] = rest[key];
    }
    return doc;
  }

  /**
   * The values a write binds: each column in table order, the rest as JSON text (or null), then
   * the id (last, so an INSERT and an `UPDATE ... WHERE id = ?` bind the same array).
   */
  toRow(doc: Doc): unknown[] {
    if (!this.typed) return [JSON.stringify(doc), doc.id];
    const id = this.storedId(doc.id);
    if (id === null) throw new Error(`Document ${doc.id}: the id of this collection is an integer`);
    // The rest and the absent names are made only when there are some, and the document's keys
    // walked without an array: this runs for every written document (about ten a probed check),
    // most of which have neither.
    const values: unknown[] = [];
    let absent: string[] | null = null;
    const declared = this.declared;
    for (const [name, type] of this.columns) {
      const value = doc[name];
      if (value === undefined) (absent ??= []).push(name);
      values.push(value === undefined || value === null ? null : toColumn(type, value));
    }
    let rest: Record<string, unknown> | null = null;
    for (const key in doc) {
      if (declared.has(key) || doc[key] === undefined) continue;
      (rest ??= {})[key] = doc[key];
    }
    if (absent !== null) (rest ??= {})[ABSENT] = absent;
    const json = rest === null ? null : JSON.stringify(rest);
    if (rest !== null && typeof json !== 'string') throw new Error(`Document ${doc.id} cannot be serialised`);
    values.push(json, id);
    return values;
  }
}

/** A document value as its column stores it (the value was checked against the type before). */
export function toColumn(type: ColumnType, value: unknown): number | string {
  switch (type) {
    case 'boolean':
      return value ? 1 : 0;
    case 'timestamp':
      return canonicalTimestampMs(value)!;
    case 'real':
      // JSON has no -0: a document read back from JSON never holds it either.
      return (value as number) === 0 ? 0 : (value as number);
    default:
      return value as number | string;
  }
}

function fromColumn(type: ColumnType, value: unknown): unknown {
  switch (type) {
    case 'boolean':
      return value === 1;
    case 'timestamp':
      return new Date(value as number).toISOString();
    default:
      return value;
  }
}
