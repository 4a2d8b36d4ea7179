import { ANY, NO_STREAM, jsonEvent, type JSONType } from '@eventstore/db-client';
import { IMPORT_CHUNK } from '../../../src/monitoring/application/monitoring.commands.js';
import { EsdbEventStore, appendBatches, appendSize, SERVER_MAX_APPEND_BYTES } from '../../../src/platform/event-store/eventstoredb/esdb-event-store.js';

/** An imported check as the import handler records it, with a long failure reason. */
function importedCheck(index: number) {
  return jsonEvent({
    type: 'CheckRecorded',
    data: {
      check_id: index,
      team_id: 1,
      project_id: 1,
      endpoint_id: 7,
      configuration_version: 3,
      source: 'scheduled',
      job_id: null,
      success: false,
      status_code: 503,
      latency_ms: 1200,
      time_to_first_byte_ms: 1100,
      duration_ms: 1200,
      body_complete: true,
      failure_reason: `upstream said: ${'x'.repeat(2000)}`,
      response_excerpt: null,
      checked_at: new Date(Date.UTC(2026, 0, 1) + index * 60_000).toISOString(),
      alert_suppressed: false,
      latency_anomaly: false,
      latency_threshold_ms: null,
      imported: true,
    } as JSONType,
    metadata: { actor: 'admin', request_id: 'req-1', correlation_id: null, causation_id: null, occurred_at: '2026-01-01T00:00:00.000Z', schema_version: 1 },
  });
}

describe('EventStoreDB appends are split by bytes, not by count', () => {
  it('keeps every append of one import chunk under the server\'s 1 MiB maximum, in order, nothing lost', () => {
    const events = Array.from({ length: IMPORT_CHUNK }, (_, i) => importedCheck(i));
    const total = events.reduce((sum, event) => sum + appendSize(event), 0);
    expect(total).toBeGreaterThan(SERVER_MAX_APPEND_BYTES); // what one append of the chunk used to send

    const batches = appendBatches(events);
    expect(batches.length).toBeGreaterThan(1);
    for (const batch of batches) {
      expect(Buffer.byteLength(JSON.stringify(batch.map((e) => [e.type, e.data, e.metadata])))).toBeLessThan(SERVER_MAX_APPEND_BYTES);
    }
    expect(batches.flat()).toEqual(events);
  });

  it('sends small appends whole, and an event larger than the budget on its own', () => {
    const small = [importedCheck(1), importedCheck(2)];
    expect(appendBatches(small)).toEqual([small]);
    const huge = jsonEvent({ type: 'Big', data: { blob: 'y'.repeat(5000) } });
    expect(appendBatches([small[0], huge, small[1]], 4000)).toEqual([[small[0]], [huge], [small[1]]]);
  });
});

describe('EventStoreDB adapter append over the size of one server write', () => {
  /** The adapter with its client's appendToStream replaced: what would have gone to the server. */
  function storeRecordingAppends() {
    const store = new EsdbEventStore('esdb://127.0.0.1:1?tls=false', { appendBudgetBytes: 8_000 });
    const calls: Array<{ count: number; expectedRevision: unknown }> = [];
    let revision = -1n;
    let position = 1000n;
    const client = (store as unknown as { client: { appendToStream: unknown } }).client;
    client.appendToStream = async (_stream: string, events: unknown[], options: { expectedRevision: unknown }) => {
      calls.push({ count: events.length, expectedRevision: options.expectedRevision });
      revision += BigInt(events.length);
      position += 100n;
      return { success: true, nextExpectedRevision: revision, position: { commit: position, prepare: position } };
    };
    return { store, calls };
  }
  const big = (count: number) => Array.from({ length: count }, (_, i) => ({ type: 'CheckRecorded', data: { i, reason: 'z'.repeat(1500) } }));

  it('chains an exact expected revision from one append to the next, so nothing slips in between', async () => {
    const { store, calls } = storeRecordingAppends();
    const result = await store.append('checks-1', big(12), { expectedRevision: 'no_stream' });
    expect(calls.length).toBeGreaterThan(1);
    expect(calls.reduce((sum, call) => sum + call.count, 0)).toBe(12);
    // The first append expects no stream; each later one, the last revision the previous wrote.
    const expected: unknown[] = [NO_STREAM];
    let last = -1n;
    for (const call of calls.slice(0, -1)) expected.push((last += BigInt(call.count)));
    expect(calls.map((call) => call.expectedRevision)).toEqual(expected);
    expect(result).toEqual({ nextExpectedRevision: 11, position: 1000 + 100 * calls.length });
    await store.close();
  });

  it('keeps "any" for every append when the caller expects nothing', async () => {
    const { store, calls } = storeRecordingAppends();
    await store.append('checks-1', big(12), { expectedRevision: 'any' });
    expect(calls.length).toBeGreaterThan(1);
    expect(new Set(calls.map((call) => call.expectedRevision))).toEqual(new Set([ANY]));
    await store.close();
  });
});
