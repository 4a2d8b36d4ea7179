import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Doc, Scalar, SortDirection } from '../read-store/read-store.port.js';
import { canonicalJson } from '../canonical-json.js';
import { Problems } from './problem.js';

export interface Pagination {
  next_cursor: string | null;
  has_more: boolean;
}

/** Signatures remembered per codec: the same lists and pages are asked for again and again. */
const SIGNATURES_KEPT = 1_000;
const LONGEST_REMEMBERED = 512;

/**
 * Opaque keyset cursors: the last row's sort values, bound to the query's filters and signed,
 * so a cursor from another query or a tampered one is refused (400 invalid_cursor).
 */
export class CursorCodec {
  private readonly signatures = new Map<string, string>();

  constructor(private readonly key: Buffer) {}

  private sign(text: string): string {
    let signature = this.signatures.get(text);
    if (signature === undefined) {
      signature = createHmac('sha256', this.key).update(text).digest('base64url').slice(0, 22);
      if (text.length > LONGEST_REMEMBERED) return signature;
      if (this.signatures.size >= SIGNATURES_KEPT) this.signatures.clear();
      this.signatures.set(text, signature);
    }
    return signature;
  }

  private signFilters(filters: unknown): string {
    return this.sign(canonicalJson(filters));
  }

  encode(keyset: Scalar[], filters: unknown): string {
    const payload = Buffer.from(JSON.stringify({ k: keyset, f: this.signFilters(filters) })).toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  decode(cursor: string | undefined, filters: unknown): Scalar[] | undefined {
    if (cursor === undefined) return undefined;
    const [payload, signature, extra] = cursor.split('.');
    if (!payload || !signature || extra !== undefined) throw Problems.invalidCursor();
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw Problems.invalidCursor();
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { k: Scalar[]; f: string };
    if (decoded.f !== this.signFilters(filters) || !Array.isArray(decoded.k)) throw Problems.invalidCursor();
    return decoded.k;
  }

  /** Fetch `limit + 1` rows; this trims the extra one and issues the cursor for the next page. */
  page<T extends Doc>(rows: T[], limit: number, sort: Array<[string, SortDirection]>, filters: unknown): { rows: T[]; pagination: Pagination } {
    const hasMore = rows.length > limit;
    const pageRows = hasMore ? rows.slice(0, limit) : rows;
    const last = pageRows[pageRows.length - 1];
    const next = hasMore && last ? this.encode(sort.map(([field]) => (last[field] ?? null) as Scalar), filters) : null;
    return { rows: pageRows, pagination: { next_cursor: next, has_more: next !== null } };
  }
}
