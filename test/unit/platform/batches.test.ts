import { batches } from '../../../src/platform/projections/batches.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const AN_HOUR = 3_600_000;

/** Yields `first` at once, then (after `release`) the rest one event-loop turn apart, then ends. */
function source(first: number, rest: number[], release: Promise<void>): AsyncIterable<number> {
  return {
    async *[Symbol.asyncIterator]() {
      yield first;
      await release;
      for (const value of rest) {
        await nextTurn();
        yield value;
      }
    },
  };
}

async function collect(iterable: AsyncIterable<number[]>, onBatch: (batch: number[]) => void): Promise<number[][]> {
  const seen: number[][] = [];
  for await (const batch of iterable) {
    seen.push(batch);
    onBatch(batch);
  }
  return seen;
}

describe('batches', () => {
  it('hands over the first event after a quiet spell at once, then gathers what keeps arriving', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));

    const seen = await collect(batches(source(1, [2, 3, 4, 5], released), { max: 100, gatherMs: AN_HOUR }), () => release());

    expect(seen).toEqual([[1], [2, 3, 4, 5]]);
  });

  it('without gathering, cuts a batch at each turn of the event loop', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));

    const seen = await collect(batches(source(1, [2, 3], released), { max: 100 }), () => release());

    expect(seen.flat()).toEqual([1, 2, 3]);
    expect(seen.length).toBeGreaterThan(2);
  });

  it('never exceeds max, even while gathering', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));

    const seen = await collect(batches(source(1, [2, 3, 4, 5, 6, 7], released), { max: 4, gatherMs: AN_HOUR }), () => release());

    expect(seen).toEqual([[1], [2, 3, 4, 5], [6, 7]]);
  });
});
