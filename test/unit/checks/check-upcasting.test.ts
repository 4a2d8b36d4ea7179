import { upcasters } from '../../../src/app/contexts.js';
import { CHECK_RECORDED, type CheckRecordedData } from '../../../src/checks/domain/check.js';
import { SqliteEventStore } from '../../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { withUpcasting } from '../../../src/platform/event-store/upcasting.js';

const CHECKED_AT = '2026-11-20T10:00:00.000Z';

function fullCheck(extra: Partial<CheckRecordedData> = {}): CheckRecordedData {
  return {
    check_id: 7,
    team_id: 1,
    project_id: 2,
    endpoint_id: 3,
    configuration_version: 1,
    source: 'scheduled',
    job_id: null,
    success: true,
    status_code: 200,
    latency_ms: 120,
    time_to_first_byte_ms: 120,
    duration_ms: 120,
    body_complete: true,
    failure_reason: null,
    response_excerpt: null,
    checked_at: CHECKED_AT,
    alert_suppressed: false,
    latency_anomaly: false,
    latency_threshold_ms: null,
    imported: false,
    region: 'local',
    ...extra,
  };
}

describe('CheckRecorded stored shapes', () => {
  let raw: SqliteEventStore;
  beforeEach(() => {
    raw = new SqliteEventStore(':memory:');
  });
  afterEach(() => raw.close());

  it('reads a stored v1 check (every field, nulls included) as the full check, leaving the stored event as it was', async () => {
    // Written before regions existed: no region field; read back as region `local`.
    const { region: _none, ...v1 } = fullCheck({ job_id: 'job-1', failure_reason: null });
    // Stored as main wrote them before v2: version 1, occurred_at not necessarily the check's time.
    await raw.append('checks-3', [{ type: CHECK_RECORDED, schemaVersion: 1, data: v1, metadata: { occurred_at: '2026-11-20T10:00:05.000Z' } }], { expectedRevision: 'any' });
    const store = withUpcasting(raw, upcasters());
    const [read] = await store.readStream('checks-3');
    expect(read.schemaVersion).toBe(2);
    expect(read.data).toEqual({ ...v1, region: 'local' });
    const [stored] = await raw.readStream('checks-3');
    expect(stored.schemaVersion).toBe(1);
    expect(stored.data).toEqual(v1);
  });

  it('stores new checks without nulls or defaults, and hands every reader the full check back', async () => {
    const store = withUpcasting(raw, upcasters());
    const plain = fullCheck();
    const unusual = fullCheck({
      check_id: 8,
      source: 'manual',
      success: false,
      status_code: 0,
      time_to_first_byte_ms: 0,
      duration_ms: 10_000,
      body_complete: false,
      failure_reason: 'timeout: no response within 10000 ms',
      response_excerpt: 'x',
      alert_suppressed: true,
      latency_anomaly: true,
      latency_threshold_ms: 900,
      imported: true,
      job_id: 'job-8',
      region: 'eu-west',
    });
    await store.append(
      'checks-3',
      [plain, unusual].map((data) => ({ type: CHECK_RECORDED, data, metadata: { occurred_at: data.checked_at, actor: 'system:prober' } })),
      { expectedRevision: 'any' },
    );
    const stored = await raw.readStream('checks-3');
    expect(stored.map((e) => e.schemaVersion)).toEqual([2, 2]);
    expect(stored[0].data).toEqual({ check_id: 7, team_id: 1, project_id: 2, endpoint_id: 3, configuration_version: 1, success: true, status_code: 200, latency_ms: 120 });
    expect(JSON.stringify(stored.map((e) => e.data))).not.toContain('null');
    const { checked_at: _omitted, ...unusualStored } = unusual;
    expect(stored[1].data).toEqual(unusualStored);

    expect((await store.readStream('checks-3')).map((e) => e.data)).toEqual([plain, unusual]);
    expect((await store.readAll({ maxCount: 10 })).map((e) => e.data)).toEqual([plain, unusual]);
    const subscription = store.subscribeToAll({});
    const seen: unknown[] = [];
    for await (const event of subscription) {
      seen.push(event.data);
      if (seen.length === 2) break;
    }
    await subscription.close();
    expect(seen).toEqual([plain, unusual]);
  });

  it('keeps checked_at in the data when the envelope says another time', async () => {
    const store = withUpcasting(raw, upcasters());
    await store.append('checks-3', [{ type: CHECK_RECORDED, data: fullCheck(), metadata: { occurred_at: '2026-11-20T11:00:00.000Z' } }], { expectedRevision: 'any' });
    expect(((await raw.readStream('checks-3'))[0].data as CheckRecordedData).checked_at).toBe(CHECKED_AT);
    expect(((await store.readStream('checks-3'))[0].data as CheckRecordedData).checked_at).toBe(CHECKED_AT);
  });
});
