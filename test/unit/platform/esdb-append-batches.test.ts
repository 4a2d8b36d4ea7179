import { jsonEvent, type JSONType } from '@eventstore/db-client';
import { IMPORT_CHUNK } from '../../../src/monitoring/application/monitoring.commands.js';
import { appendBatches, appendSize, SERVER_MAX_APPEND_BYTES } from '../../../src/platform/event-store/eventstoredb/esdb-event-store.js';

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
