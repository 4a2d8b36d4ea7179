import { nextSlot, spreadOffset } from '../../src/probing/application/scheduler.js';

describe('scheduler due times', () => {
  it('spreads endpoints on one interval across it instead of firing together', () => {
    const buckets = new Array(10).fill(0);
    for (let id = 1; id <= 1000; id++) buckets[Math.floor(spreadOffset(id, 1000) / 100)]++;
    for (const count of buckets) expect(count).toBeGreaterThan(50);
  });

  it('gives each endpoint one slot per interval, the same in every process', () => {
    const from = Date.parse('2026-01-01T00:00:00.000Z');
    const first = nextSlot(42, 5000, from);
    expect(first).toBeGreaterThanOrEqual(from);
    expect(first - from).toBeLessThan(5000);
    expect(nextSlot(42, 5000, first + 1)).toBe(first + 5000);
    expect(nextSlot(42, 5000, first)).toBe(first);
  });
});
