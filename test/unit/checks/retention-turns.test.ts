import { upcasters } from '../../../src/app/contexts.js';
import { CheckRetention } from '../../../src/checks/application/retention.js';
import { CHECK_RECORDED, checksStream } from '../../../src/checks/domain/check.js';
import type { EventStore } from '../../../src/platform/event-store/event-store.port.js';
import { SqliteEventStore } from '../../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { withUpcasting } from '../../../src/platform/event-store/upcasting.js';
import { IDS_RESERVED, sequenceStream } from '../../../src/platform/ids/id-allocator.js';
import { check } from '../analytics/support/checks.js';
import { mostStepsBetweenTurns, turnsDuring } from '../../support/event-loop-turns.js';

/**
 * A retention pass lets the event loop run between two endpoints and between two summaries: over
 * SQLite each of its reads and writes is synchronous under its `await`, so a pass that never
 * yields is one task holding the loop (probes, requests, projections) for the whole pass. And
 * the hourly pass with nothing to summarize (the horizon moves once a day) reads little.
 */
const NOW = Date.parse('2026-11-23T12:34:56.789Z');
const DAY = 86_400_000;

async function logWith(endpoints: number, checksOfEndpoint1: number, ageMs = 10 * DAY): Promise<EventStore> {
  const events: EventStore = withUpcasting(new SqliteEventStore(':memory:'), upcasters());
  await events.append(sequenceStream('endpoint'), [{ type: IDS_RESERVED, data: { first: 1, count: endpoints } }], { expectedRevision: 'any' });
  for (let i = 0; i < checksOfEndpoint1; i++) {
    const checkedAt = new Date(NOW - ageMs + i * 20_000).toISOString();
    const data = check({ check_id: i + 1, checked_at: checkedAt });
    await events.append(checksStream(1), [{ type: CHECK_RECORDED, data, metadata: { occurred_at: checkedAt } }], { expectedRevision: 'any' });
  }
  return events;
}

describe('check retention pass: the event loop runs during it', () => {
  it('runs other tasks between every two endpoints, with nothing to summarize', async () => {
    const events = await logWith(40, 0);
    try {
      let done = 0;
      const retention = new CheckRetention(events, { days: 3 });
      const { result, seen } = await turnsDuring(() => retention.apply(NOW, { onProgress: (p) => (done = p.endpoint) }), () => done);
      expect(result.endpoints).toBe(40);
      // Before: no turn until the pass had ended (seen empty). Now: at most one endpoint's work between two turns.
      expect(seen.length).toBeGreaterThan(0);
      expect(mostStepsBetweenTurns(seen, result.endpoints)).toBeLessThanOrEqual(1);
    } finally {
      await events.close();
    }
  });

  it('runs other tasks between two summaries of one endpoint', async () => {
    const events = await logWith(1, 400);
    try {
      let summaries = 0;
      const retention = new CheckRetention(events, { days: 3, maxChecksPerSummary: 100 });
      const { result, seen } = await turnsDuring(() => retention.apply(NOW, { onSummary: () => void summaries++ }), () => summaries);
      expect(result.summaries).toBeGreaterThanOrEqual(3);
      const during = seen.filter((value) => value > 0 && value < result.summaries);
      expect(during.length).toBeGreaterThan(0);
    } finally {
      await events.close();
    }
  });
});

describe('check retention pass: nothing to summarize', () => {
  it('reads a few of the checks newer than the horizon, not a whole page', async () => {
    const events = await logWith(1, 1500, 2 * DAY);
    try {
      let checksRead = 0;
      const counting = new Proxy(events, {
        get(target, name, receiver) {
          if (name !== 'readStream') return Reflect.get(target, name, receiver);
          return async (...args: Parameters<EventStore['readStream']>) => {
            const page = await target.readStream(...args);
            if (args[0] === checksStream(1)) checksRead += page.length;
            return page;
          };
        },
      });
      const result = await new CheckRetention(counting, { days: 30 }).apply(NOW);
      expect(result).toMatchObject({ endpoints: 1, summaries: 0, removed: 0 });
      // Before: the first page, 1,000 checks decoded to find the first one too new.
      expect(checksRead).toBeLessThanOrEqual(16);
    } finally {
      await events.close();
    }
  });
});
