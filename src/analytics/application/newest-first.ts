/**
 * Merges several newest-first walks (one per endpoint) into the `limit` newest rows overall,
 * newest by `checked_at_ms`, then by `check_id`: the p95 sample of a project.
 *
 * Each walk is read in pages through a keyset (`after` = the last row's sort values). The first
 * pages are read together, sized so that their sum is about `limit`; a walk whose page runs out
 * while its rows are still among the newest is read further. So at most `limit` rows plus about
 * one page per walk are read, whatever the number of checks in the range.
 */
export interface WalkRow {
  checked_at_ms: number;
  check_id: number;
}

/** One page of a walk: at most `limit` rows strictly after `after`, newest first. */
export type Walk<R extends WalkRow> = (limit: number, after?: [number, number]) => Promise<R[]>;

const MIN_PAGE = 256;

export async function newestFirst<R extends WalkRow>(walks: Array<Walk<R>>, limit: number): Promise<R[]> {
  if (walks.length === 1) return walks[0](limit);
  const page = Math.min(limit, Math.max(MIN_PAGE, Math.ceil(limit / Math.max(1, walks.length))));
  const cursors = await Promise.all(walks.map(async (walk) => cursor(walk, page, await walk(page))));
  const heap = new MaxHeap<Cursor<R>>((a, b) => newer(a.head(), b.head()));
  for (const c of cursors) if (c.hasHead()) heap.push(c);
  const sample: R[] = [];
  while (sample.length < limit && heap.size() > 0) {
    const top = heap.pop()!;
    sample.push(top.take());
    if (await top.refill()) heap.push(top);
  }
  return sample;
}

interface Cursor<R extends WalkRow> {
  hasHead(): boolean;
  head(): R;
  take(): R;
  /** Reads the next page when the buffer is empty and the walk may have more; false when done. */
  refill(): Promise<boolean>;
}

function cursor<R extends WalkRow>(walk: Walk<R>, page: number, first: R[]): Cursor<R> {
  let rows = first;
  let at = 0;
  let exhausted = first.length < page;
  return {
    hasHead: () => at < rows.length,
    head: () => rows[at],
    take: () => rows[at++],
    async refill() {
      if (at < rows.length) return true;
      if (exhausted) return false;
      const last = rows[rows.length - 1];
      rows = await walk(page, [last.checked_at_ms, last.check_id]);
      at = 0;
      exhausted = rows.length < page;
      return rows.length > 0;
    },
  };
}

/** a is newer than b. */
function newer(a: WalkRow, b: WalkRow): boolean {
  return a.checked_at_ms > b.checked_at_ms || (a.checked_at_ms === b.checked_at_ms && a.check_id > b.check_id);
}

/** A binary heap whose top is the item `before` puts first. */
class MaxHeap<T> {
  private readonly items: T[] = [];

  constructor(private readonly before: (a: T, b: T) => boolean) {}

  size(): number {
    return this.items.length;
  }

  push(item: T): void {
    const items = this.items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(items[i], items[parent])) break;
      [items[i], items[parent]] = [items[parent], items[i]];
      i = parent;
    }
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let first = i;
        if (left < items.length && this.before(items[left], items[first])) first = left;
        if (right < items.length && this.before(items[right], items[first])) first = right;
        if (first === i) break;
        [items[i], items[first]] = [items[first], items[i]];
        i = first;
      }
    }
    return top;
  }
}
