import { CheckRecorder, type CheckJudge, type CheckedEndpoint } from '../../../src/checks/application/check-recorder.js';
import { checksStream, type CheckRecordedData, type ProbeOutcome } from '../../../src/checks/domain/check.js';
import type { RecordedEvent } from '../../../src/platform/event-store/event-store.port.js';
import { SqliteEventStore } from '../../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { StreamCache } from '../../../src/platform/es/stream-cache.js';
import { IdAllocator } from '../../../src/platform/ids/id-allocator.js';
import { useTempSqliteStore } from '../../support/event-store-fixtures.js';

/** A judge that remembers the job ids its stream holds and judges nothing. */
type Jobs = string[];
const evolveJobs = (jobs: Jobs, event: RecordedEvent): Jobs => [...jobs, (event.data as CheckRecordedData).job_id ?? ''];

function jobsJudge(store: SqliteEventStore): CheckJudge<CheckedEndpoint, Jobs> {
  return {
    aggregate: { initial: () => [], evolve: evolveJobs },
    fold: new StreamCache<Jobs>(store, () => [], evolveJobs),
    hasJob: (jobs, jobId) => jobs.includes(jobId),
    judge: () => ({ latency_anomaly: false, latency_threshold_ms: null }),
    afterRecorded: async () => ({ events: [], append: null }),
  };
}

const endpoint: CheckedEndpoint = { endpoint_id: 7, team_id: 1, project_id: 1, configuration_version: 1 };
const outcome: ProbeOutcome = {
  success: true,
  status_code: 200,
  latency_ms: 12,
  time_to_first_byte_ms: 10,
  duration_ms: 12,
  body_complete: true,
  failure_reason: null,
  response_excerpt: null,
  checked_at: '2026-11-28T00:00:00.000Z',
};

describe('CheckRecorder', () => {
  const log = useTempSqliteStore();
  let store: SqliteEventStore;
  beforeEach(() => (store = log.store));

  it("records one endpoint's checks in the order they came, once each, past a failed one", async () => {
    let release!: () => void;
    const slow = new Promise<void>((resolve) => (release = resolve));
    const recorder = new CheckRecorder(
      { events: store, ids: new IdAllocator(store), metrics: { checkRecorded: () => undefined } as never },
      jobsJudge(store),
      async (_endpoint, probe) => {
        // The first check's suppression lookup is slow, the second's fails: the third still waits its turn.
        if (probe.latency_ms === 1) await slow;
        if (probe.latency_ms === 2) throw new Error('lookup failed');
        return null;
      },
    );
    const record = (jobId: string, latency: number) => recorder.record({ jobId, source: 'scheduled', endpoint, outcome: { ...outcome, latency_ms: latency } });

    const first = record('job-1', 1);
    const failed = record('job-2', 2);
    const redelivered = record('job-1', 3);
    const third = record('job-3', 4);
    release();

    expect((await first).check?.job_id).toBe('job-1');
    await expect(failed).rejects.toThrow('lookup failed');
    expect((await redelivered).check).toBeNull();
    expect((await third).check?.job_id).toBe('job-3');
    const recorded = await store.readStream(checksStream(endpoint.endpoint_id));
    expect(recorded.map((event) => (event.data as CheckRecordedData).job_id)).toEqual(['job-1', 'job-3']);
    // A check recorded after the queue emptied starts a new one.
    expect((await record('job-4', 5)).check?.job_id).toBe('job-4');
  });

  it('gives every check an id of its own, increasing along each stream, across blocks and past a failed reservation', async () => {
    const allocator = new IdAllocator(store);
    let reservations = 0;
    const ids = {
      reserve: (...args: Parameters<IdAllocator['reserve']>) => (reservations++ === 0 ? Promise.reject(new Error('sequence unavailable')) : allocator.reserve(...args)),
    } as unknown as IdAllocator;
    const recorder = new CheckRecorder({ events: store, ids, metrics: { checkRecorded: () => undefined } as never }, jobsJudge(store), async () => null);
    const endpoints = Array.from({ length: 50 }, (_, i): CheckedEndpoint => ({ ...endpoint, endpoint_id: 100 + i }));
    // 250 checks at once over 50 endpoints: three blocks of 100 ids, the first reservation refused.
    const outcomes = await Promise.allSettled(
      Array.from({ length: 250 }, (_, i) => recorder.record({ jobId: `job-${i}`, source: 'scheduled', endpoint: endpoints[i % 50], outcome })),
    );

    expect(outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason.message)).toEqual(['sequence unavailable']);
    const checkIds: number[] = [];
    for (const { endpoint_id } of endpoints) {
      const along = (await store.readStream(checksStream(endpoint_id))).map((event) => (event.data as CheckRecordedData).check_id);
      expect(along).toEqual([...along].sort((a, b) => a - b));
      checkIds.push(...along);
    }
    expect(checkIds.length).toBe(249);
    expect(new Set(checkIds).size).toBe(249);
    // Once blocks are in hand, ids are answered without a reservation each.
    expect(reservations).toBe(4);
  });
});
