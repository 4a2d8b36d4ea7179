/**
 * Cuts a half-open range `[from, to)` of epoch milliseconds into the fewest pieces that rollups
 * can answer: whole UTC days, hours and minutes, plus at most two raw edges shorter than a
 * minute where `from` or `to` is not on a minute boundary. Summing those pieces gives exactly
 * the range, so a query costs (range / granularity + edges) rows, whatever the check count.
 */

export type Granularity = 'minute' | 'hour' | 'day';

export const GRANULARITY_MS: Readonly<Record<Granularity, number>> = {
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
};

const COARSEST_FIRST: Granularity[] = ['day', 'hour', 'minute'];
const HOURS_AND_DAYS: Granularity[] = ['day', 'hour'];

/** One rollup row: the aligned period `[start, start + GRANULARITY_MS[granularity])`. */
export interface RollupPiece {
  kind: 'rollup';
  granularity: Granularity;
  start: number;
}

/** Raw checks in `[from, to)`, always inside a single minute. */
export interface RawPiece {
  kind: 'raw';
  from: number;
  to: number;
}

export type RangePiece = RollupPiece | RawPiece;

export function floorTo(ms: number, unit: number): number {
  return Math.floor(ms / unit) * unit;
}

export function ceilTo(ms: number, unit: number): number {
  return Math.ceil(ms / unit) * unit;
}

/**
 * Pieces in time order; empty for an empty range. Before `horizon` (retention: raw checks and
 * minute rollups older than it are gone) the range is planned in whole hours, rounded inward,
 * whether or not a prune has happened yet, so figures do not move when one does.
 */
export function planRange(from: number, to: number, horizon = -Infinity): RangePiece[] {
  if (from >= to) return [];
  if (from < horizon) {
    const hour = GRANULARITY_MS.hour;
    const oldFrom = ceilTo(from, hour);
    const oldTo = floorTo(Math.min(to, horizon), hour);
    const pieces: RangePiece[] = oldFrom < oldTo ? alignedPieces(oldFrom, oldTo, HOURS_AND_DAYS) : [];
    if (to > horizon) pieces.push(...planRange(Math.max(from, horizon), to));
    return pieces;
  }
  const minute = GRANULARITY_MS.minute;
  const alignedFrom = ceilTo(from, minute);
  const alignedTo = floorTo(to, minute);
  if (alignedFrom > alignedTo) return [{ kind: 'raw', from, to }];

  const pieces: RangePiece[] = [];
  if (from < alignedFrom) pieces.push({ kind: 'raw', from, to: alignedFrom });
  pieces.push(...alignedPieces(alignedFrom, alignedTo));
  if (alignedTo < to) pieces.push({ kind: 'raw', from: alignedTo, to });
  return pieces;
}

/**
 * Greedy: at each point take the coarsest period that starts there and still fits. Because
 * minutes nest in hours and hours in UTC days, this yields the fewest pieces.
 */
function alignedPieces(from: number, to: number, granularities: Granularity[] = COARSEST_FIRST): RollupPiece[] {
  const pieces: RollupPiece[] = [];
  let cursor = from;
  while (cursor < to) {
    const granularity = granularities.find(
      (g) => cursor % GRANULARITY_MS[g] === 0 && cursor + GRANULARITY_MS[g] <= to,
    ) as Granularity;
    pieces.push({ kind: 'rollup', granularity, start: cursor });
    cursor += GRANULARITY_MS[granularity];
  }
  return pieces;
}

/** Consecutive rollup periods of one granularity, [from, to) in epoch ms. */
export interface RollupRun {
  granularity: Granularity;
  from: number;
  to: number;
}

/** The pieces' rollup periods as runs of consecutive periods of one granularity. */
export function rollupRuns(pieces: RangePiece[]): RollupRun[] {
  const runs: RollupRun[] = [];
  for (const piece of pieces) {
    if (piece.kind !== 'rollup') continue;
    const last = runs[runs.length - 1];
    if (last && last.granularity === piece.granularity && last.to === piece.start) last.to += GRANULARITY_MS[piece.granularity];
    else runs.push({ granularity: piece.granularity, from: piece.start, to: piece.start + GRANULARITY_MS[piece.granularity] });
  }
  return runs;
}
