import fc from 'fast-check';
import { GRANULARITY_MS, planRange, type RangePiece } from '../../../src/analytics/domain/range-plan.js';

const T = (iso: string) => Date.parse(iso);

function extent(piece: RangePiece): [number, number] {
  return piece.kind === 'raw' ? [piece.from, piece.to] : [piece.start, piece.start + GRANULARITY_MS[piece.granularity]];
}

describe('range plan', () => {
  it('covers [from, to) exactly, in order, without gaps or overlap', () => {
    const base = T('2026-01-01T00:00:00Z');
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100 * 86_400_000 }), fc.integer({ min: 1, max: 95 * 86_400_000 }), (offset, length) => {
        const from = base + offset;
        const pieces = planRange(from, from + length);
        let cursor = from;
        for (const piece of pieces) {
          const [start, end] = extent(piece);
          expect(start).toBe(cursor);
          expect(end).toBeGreaterThan(start);
          cursor = end;
        }
        expect(cursor).toBe(from + length);
      }),
    );
  });

  it('uses raw checks only for the sub-minute edges, each inside one minute', () => {
    const pieces = planRange(T('2026-01-01T10:15:30.500Z'), T('2026-01-01T10:17:10Z'));
    expect(pieces).toEqual([
      { kind: 'raw', from: T('2026-01-01T10:15:30.500Z'), to: T('2026-01-01T10:16:00Z') },
      { kind: 'rollup', granularity: 'minute', start: T('2026-01-01T10:16:00Z') },
      { kind: 'raw', from: T('2026-01-01T10:17:00Z'), to: T('2026-01-01T10:17:10Z') },
    ]);
  });

  it('takes the coarsest aligned rollups: minutes up to the hour, hours up to the day, then days', () => {
    const pieces = planRange(T('2026-01-01T22:58:00Z'), T('2026-01-04T01:02:00Z'));
    const counts = pieces.reduce<Record<string, number>>((acc, p) => {
      const key = p.kind === 'raw' ? 'raw' : p.granularity;
      acc[key] = (acc[key] ?? 0) + 1;
      return acc;
    }, {});
    // 22:58-23:00 (2 min), 23:00-24:00 (1 h), Jan 2 and 3 (2 days), 00:00-01:00 (1 h), 01:00-01:02 (2 min)
    expect(counts).toEqual({ minute: 4, hour: 2, day: 2 });
  });

  it('keeps a range inside one minute as a single raw piece', () => {
    expect(planRange(T('2026-01-01T10:15:01Z'), T('2026-01-01T10:15:59Z'))).toEqual([
      { kind: 'raw', from: T('2026-01-01T10:15:01Z'), to: T('2026-01-01T10:15:59Z') },
    ]);
  });

  it('splits a range crossing one minute boundary into two raw edges', () => {
    expect(planRange(T('2026-01-01T10:15:30Z'), T('2026-01-01T10:16:30Z'))).toEqual([
      { kind: 'raw', from: T('2026-01-01T10:15:30Z'), to: T('2026-01-01T10:16:00Z') },
      { kind: 'raw', from: T('2026-01-01T10:16:00Z'), to: T('2026-01-01T10:16:30Z') },
    ]);
  });

  it('stays small for a 90-day range whatever the alignment', () => {
    const pieces = planRange(T('2026-01-01T00:00:59.999Z'), T('2026-04-01T23:59:00.001Z'));
    // at most 59 + 23 minutes/hours on each side, 90 days, 2 raw edges
    expect(pieces.length).toBeLessThanOrEqual(2 * (59 + 23) + 90 + 2);
  });

  it('is empty for an empty range', () => {
    expect(planRange(5, 5)).toEqual([]);
    expect(planRange(6, 5)).toEqual([]);
  });
});

describe('planRange with a retention horizon', () => {
  const T = (iso: string) => Date.parse(iso);
  const HORIZON = T('2026-01-03T00:00:00Z');

  it('counts the part before the horizon in whole hours, rounded inward, and the rest as usual', () => {
    expect(planRange(T('2026-01-02T21:15:30.500Z'), T('2026-01-03T00:01:30Z'), HORIZON)).toEqual([
      { kind: 'rollup', granularity: 'hour', start: T('2026-01-02T22:00:00Z') },
      { kind: 'rollup', granularity: 'hour', start: T('2026-01-02T23:00:00Z') },
      { kind: 'rollup', granularity: 'minute', start: T('2026-01-03T00:00:00Z') },
      { kind: 'raw', from: T('2026-01-03T00:01:00Z'), to: T('2026-01-03T00:01:30Z') },
    ]);
  });

  it('uses whole days where they fit, and nothing for a range shorter than an hour before the horizon', () => {
    expect(planRange(T('2026-01-01T00:00:00Z'), T('2026-01-02T01:30:00Z'), HORIZON)).toEqual([
      { kind: 'rollup', granularity: 'day', start: T('2026-01-01T00:00:00Z') },
      { kind: 'rollup', granularity: 'hour', start: T('2026-01-02T00:00:00Z') },
    ]);
    expect(planRange(T('2026-01-02T10:15:00Z'), T('2026-01-02T10:45:00Z'), HORIZON)).toEqual([]);
  });

  it('plans as before when the range starts at or after the horizon', () => {
    const from = T('2026-01-03T00:00:30Z');
    expect(planRange(from, T('2026-01-03T02:00:00Z'), HORIZON)).toEqual(planRange(from, T('2026-01-03T02:00:00Z')));
  });
});
