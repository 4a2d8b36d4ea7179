/**
 * A read-store commit as SQLite runs it, inside one IMMEDIATE transaction: the preconditions, the
 * writes and the stamps. The store plans it (layouts, statements, serialised rows) and runs it on
 * its own connection (`:memory:`) or on its writer thread's (a file), the same function either
 * way: the thread receives it as source text (`runCommitPlan.toString()`), so it refers to
 * nothing outside itself.
 */

/** How a precondition's stored value reads back as the document's field (see `CollectionLayout.toDoc`). */
export type PreconditionRead = 'json' | 'value' | 'boolean' | 'timestamp' | 'id_string';

export interface PlannedPrecondition {
  /** Selects the field's stored value of the document (no row: a missing document); null: it cannot exist. */
  sql: string | null;
  params: unknown[];
  read: PreconditionRead;
  value: string | number | boolean | null;
}

/** A collection's statements: INSERT and UPDATE binding the same values (the id last), DELETE by id. */
export interface CollectionStatements {
  insert: string;
  update: string;
  delete: string;
}

/** A write's opening entries in `CommitPlan.writes`: a put is followed by its value count and values, a delete by its id. */
export const PUT = 0;
export const DELETE = 1;

/**
 * Sent to a thread as one structured clone, so the writes are one flat array of scalars: a
 * document's statements and names once per collection, not once per write, and no object (whose
 * keys a clone writes out each time) per write.
 */
export interface CommitPlan {
  expect: PlannedPrecondition[];
  /** Every collection written, each stamped once. */
  collections: string[];
  /** By collection, in `collections`' order. */
  statements: CollectionStatements[];
  /** Each write in order: PUT, collection index, value count, values...; or DELETE, collection index, id (null: none can match). */
  writes: unknown[];
  stampsTable: string;
}

export type CommitOutcome =
  /** A precondition did not hold: nothing was written. */
  | { failed: number; actual: unknown }
  /**
   * Committed: `previous` is the stamp counter found under the write lock, `next` the stamp given
   * to every written collection (`rewritten`'s get it as their rewritten stamp too).
   */
  | { failed: null; previous: number; next: number; rewritten: string[] };

export interface CommitStatement {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): unknown;
}

/**
 * Runs `plan` inside the caller's transaction. `statement(sql, pluck)` is the connection's
 * prepared-statement cache; `putsReplace` remembers per table (by its UPDATE) whether its last put replaced a
 * document (then UPDATE is tried first) or inserted one (INSERT first): a view's puts are mostly
 * one or the other (the check list inserts, rollups and checkpoints replace), so most cost one
 * statement. Self-contained: see the file's comment.
 */
export function runCommitPlan(statement: (sql: string, pluck: boolean) => CommitStatement, plan: CommitPlan, putsReplace: Map<string, boolean>): CommitOutcome {
  for (let i = 0; i < plan.expect.length; i++) {
    const check = plan.expect[i];
    const stored = check.sql === null ? undefined : statement(check.sql, true).get(...check.params);
    let actual: unknown = stored === undefined || stored === null ? null : stored;
    if (actual !== null) {
      if (check.read === 'json') actual = JSON.parse(actual as string);
      else if (check.read === 'boolean') actual = actual === 1;
      else if (check.read === 'timestamp') actual = new Date(actual as number).toISOString();
      else if (check.read === 'id_string') actual = String(actual);
    }
    if ((actual ?? null) !== check.value) return { failed: i, actual };
  }
  const rewritten = new Set<string>();
  const writes = plan.writes;
  for (let at = 0; at < writes.length; ) {
    const op = writes[at];
    const index = writes[at + 1] as number;
    const collection = plan.collections[index];
    const sql = plan.statements[index];
    if (op === 0 /* PUT */) {
      const count = writes[at + 2] as number;
      const values = writes.slice(at + 3, at + 3 + count);
      at += 3 + count;
      if (putsReplace.get(sql.update) === true) {
        if (statement(sql.update, false).run(...values).changes > 0) rewritten.add(collection);
        else {
          statement(sql.insert, false).run(...values);
          putsReplace.set(sql.update, false);
        }
      } else if (statement(sql.insert, false).run(...values).changes === 0) {
        statement(sql.update, false).run(...values);
        rewritten.add(collection);
        putsReplace.set(sql.update, true);
      }
    } else {
      const id = writes[at + 2];
      at += 3;
      if (id !== null && statement(sql.delete, false).run(id).changes > 0) rewritten.add(collection);
    }
  }
  const previous = statement(`SELECT coalesce(max(changed), 0) FROM ${plan.stampsTable}`, true).get() as number;
  const next = previous + 1;
  const changedOnly = `INSERT INTO ${plan.stampsTable} (collection, changed, rewritten) VALUES (?, ?, 0) ON CONFLICT (collection) DO UPDATE SET changed = excluded.changed`;
  const both = `INSERT INTO ${plan.stampsTable} (collection, changed, rewritten) VALUES (?, ?, ?) ON CONFLICT (collection) DO UPDATE SET changed = excluded.changed, rewritten = excluded.rewritten`;
  for (const collection of plan.collections) {
    if (rewritten.has(collection)) statement(both, false).run(collection, next, next);
    else statement(changedOnly, false).run(collection, next);
  }
  return { failed: null, previous, next, rewritten: [...rewritten] };
}
