import { upcasters } from '../../../src/app/contexts.js';
import { CHECK_RECORDED, recordedCheck, type CheckRecordedData } from '../../../src/checks/domain/check.js';
import { SqliteEventStore } from '../../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { NewerSchemaVersionError, withUpcasting } from '../../../src/platform/event-store/upcasting.js';

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

  it('refuses a check written by a newer version of the service instead of reading it as a failure', async () => {
    // A newer stored form may leave out fields this version expects (v5 leaves out `success`
    // when true): read as this version's form, a successful check would read as failed.
    const newer = upcasters().latestVersion(CHECK_RECORDED) + 1;
    await raw.append('checks-3', [{ type: CHECK_RECORDED, schemaVersion: newer, data: { check_id: 7, latency_ms: 120 }, metadata: { occurred_at: CHECKED_AT } }], { expectedRevision: 'any' });
    const store = withUpcasting(raw, upcasters());
    await expect(store.readStream('checks-3')).rejects.toThrow(NewerSchemaVersionError);
    await expect(store.readStream('checks-3')).rejects.toThrow(`CheckRecorded v${newer} at checks-3@0 was written by a newer version`);
  });

  it('reads a stored v1 check (every field, nulls included) as the full check, leaving the stored event as it was', async () => {
    // Written before regions existed: no region field; read back as region `local`.
    const { region: _none, ...v1 } = fullCheck({ job_id: 'job-1', failure_reason: null });
    // Stored as main wrote them before v2: version 1, occurred_at not necessarily the check's time.
    await raw.append('checks-3', [{ type: CHECK_RECORDED, schemaVersion: 1, data: v1, metadata: { occurred_at: '2026-11-20T10:00:05.000Z' } }], { expectedRevision: 'any' });
    const store = withUpcasting(raw, upcasters());
    const [read] = await store.readStream('checks-3');
    expect(read.schemaVersion).toBe(5);
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
    expect(stored.map((e) => e.schemaVersion)).toEqual([5, 5]);
    // The endpoint id is the stream's (checks-3); success true and status 200 are v5's defaults.
    expect(stored[0].data).toEqual({ check_id: 7, team_id: 1, project_id: 2, configuration_version: 1, latency_ms: 120 });
    expect(JSON.stringify(stored.map((e) => e.data))).not.toContain('null');
    const { checked_at: _omitted, endpoint_id: _stream, ...unusualStored } = unusual;
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

  it("keeps a scheduled job's id as the lag of checked_at behind its due time, and reads every job id back as it was", async () => {
    const store = withUpcasting(raw, upcasters());
    const due = Date.parse(CHECKED_AT) - 37;
    const checks = [
      fullCheck({ check_id: 1, job_id: `3:${due}` }),
      // Another endpoint's id, a regional job, a manual one, a due time after the check, and ids the scheduler never writes.
      fullCheck({ check_id: 2, job_id: `4:${due}` }),
      fullCheck({ check_id: 3, job_id: `3:${due}:eu-west` }),
      fullCheck({ check_id: 4, job_id: 'manual:0b7c6a52-8f0e-4d1a-9c3e-6f1d2a3b4c5d', source: 'manual' }),
      fullCheck({ check_id: 5, job_id: `3:${due + 1000}` }),
      fullCheck({ check_id: 6, job_id: `3:0${due}` }),
      fullCheck({ check_id: 7, job_id: '3:' }),
    ];
    await store.append('checks-3', checks.map((data) => ({ type: CHECK_RECORDED, data, metadata: { occurred_at: data.checked_at } })), { expectedRevision: 'any' });
    const stored = (await raw.readStream('checks-3')).map((e) => e.data as Record<string, unknown>);
    expect(stored.map((data) => [data.job_id, data.job_due_lag_ms])).toEqual([
      [undefined, 37],
      [`4:${due}`, undefined],
      [`3:${due}:eu-west`, undefined],
      ['manual:0b7c6a52-8f0e-4d1a-9c3e-6f1d2a3b4c5d', undefined],
      [undefined, -963],
      [`3:0${due}`, undefined],
      ['3:', undefined],
    ]);
    const read = await store.readStream('checks-3');
    expect(read.map((e) => e.data)).toEqual(checks);
  });

  it('reads a check stored as v2 (job id written out) as the same full check', async () => {
    const check = fullCheck({ job_id: `3:${Date.parse(CHECKED_AT) - 5}`, response_excerpt: 'ok' });
    const { checked_at: _omitted, ...v2 } = Object.fromEntries(Object.entries(check).filter(([key, value]) => value !== null && !['source', 'body_complete', 'alert_suppressed', 'latency_anomaly', 'imported', 'region', 'time_to_first_byte_ms', 'duration_ms'].includes(key)));
    await raw.append('checks-3', [{ type: CHECK_RECORDED, schemaVersion: 2, data: v2, metadata: { occurred_at: CHECKED_AT } }], { expectedRevision: 'any' });
    const [read] = await withUpcasting(raw, upcasters()).readStream('checks-3');
    expect(read.schemaVersion).toBe(5);
    expect(read.data).toEqual(check);
  });

  it("keeps the endpoint id only when the stream's name does not say it, and reads every check back whole", async () => {
    const store = withUpcasting(raw, upcasters());
    const own = fullCheck({ check_id: 1, endpoint_id: 12345 });
    const elsewhere = fullCheck({ check_id: 2, endpoint_id: 12345 });
    const zero = fullCheck({ check_id: 3, endpoint_id: 0 });
    await store.append('checks-12345', [{ type: CHECK_RECORDED, data: own, metadata: { occurred_at: CHECKED_AT } }], { expectedRevision: 'any' });
    await store.append('checks-012345', [{ type: CHECK_RECORDED, data: elsewhere, metadata: { occurred_at: CHECKED_AT } }], { expectedRevision: 'any' });
    await store.append('checks-0', [{ type: CHECK_RECORDED, data: zero, metadata: { occurred_at: CHECKED_AT } }], { expectedRevision: 'any' });
    const stored = (await raw.readAll({ maxCount: 10 })).map((e) => (e.data as Record<string, unknown>).endpoint_id);
    expect(stored).toEqual([undefined, 12345, undefined]);
    expect((await store.readAll({ maxCount: 10 })).map((e) => e.data)).toEqual([own, elsewhere, zero]);
    expect((await store.readStream('checks-12345')).map((e) => e.data)).toEqual([own]);
  });

  it('reads a check stored as v3 (endpoint id written out) as the same full check', async () => {
    const check = fullCheck({ job_id: `3:${Date.parse(CHECKED_AT) - 5}` });
    const { checked_at: _omitted, job_id: _job, ...v3 } = Object.fromEntries(Object.entries(check).filter(([key, value]) => value !== null && !['source', 'body_complete', 'alert_suppressed', 'latency_anomaly', 'imported', 'region', 'time_to_first_byte_ms', 'duration_ms'].includes(key)));
    await raw.append('checks-3', [{ type: CHECK_RECORDED, schemaVersion: 3, data: { ...v3, job_due_lag_ms: 5 }, metadata: { occurred_at: CHECKED_AT } }], { expectedRevision: 'any' });
    const [read] = await withUpcasting(raw, upcasters()).readStream('checks-3');
    expect(read.schemaVersion).toBe(5);
    expect(read.data).toEqual(check);
  });

  it('reads a check stored as v4 (success and status code written out) as the same full check', async () => {
    const check = fullCheck({ job_id: `3:${Date.parse(CHECKED_AT) - 5}` });
    const { checked_at: _omitted, job_id: _job, endpoint_id: _stream, ...v4 } = Object.fromEntries(Object.entries(check).filter(([key, value]) => value !== null && !['source', 'body_complete', 'alert_suppressed', 'latency_anomaly', 'imported', 'region', 'time_to_first_byte_ms', 'duration_ms'].includes(key)));
    await raw.append('checks-3', [{ type: CHECK_RECORDED, schemaVersion: 4, data: { ...v4, job_due_lag_ms: 5 }, metadata: { occurred_at: CHECKED_AT } }], { expectedRevision: 'any' });
    const [read] = await withUpcasting(raw, upcasters()).readStream('checks-3');
    expect(read.schemaVersion).toBe(5);
    expect(read.data).toEqual(check);
  });

  it("leaves out a check's success only when true and its status code only when 200, and reads each back", async () => {
    const store = withUpcasting(raw, upcasters());
    const checks = [
      fullCheck({ check_id: 1 }),
      fullCheck({ check_id: 2, success: false, failure_reason: 'body: too short' }), // status 200, failed
      fullCheck({ check_id: 3, status_code: 204 }), // succeeded, another status
      fullCheck({ check_id: 4, success: false, status_code: 503, failure_reason: 'status: 503' }),
    ];
    await store.append('checks-3', checks.map((data) => ({ type: CHECK_RECORDED, data, metadata: { occurred_at: data.checked_at } })), { expectedRevision: 'any' });
    const stored = (await raw.readStream('checks-3')).map((e) => e.data as Record<string, unknown>);
    expect(stored.map((data) => [data.success, data.status_code])).toEqual([
      [undefined, undefined],
      [false, undefined],
      [undefined, 204],
      [false, 503],
    ]);
    expect((await store.readStream('checks-3')).map((e) => e.data)).toEqual(checks);
  });

  it("reads the optional fields and a stored key it does not know back as they were, in the recorder's key order", async () => {
    const check = fullCheck({ certificate_expires_at: '2027-01-01T00:00:00.000Z', latency_unjudged: true, latency_inflated: true, regional: true, suppressed_by: [9], success: false, alert_suppressed: true });
    const { checked_at: _omitted, endpoint_id: _stream, ...stored } = check;
    await raw.append('checks-3', [{ type: CHECK_RECORDED, schemaVersion: 4, data: { ...stored, legacy_note: 'kept' }, metadata: { occurred_at: CHECKED_AT } }], { expectedRevision: 'any' });
    const [read] = await withUpcasting(raw, upcasters()).readStream('checks-3');
    expect(read.data).toEqual({ ...check, legacy_note: 'kept' });
    // One shape for every check read: the key order of a check the recorder builds.
    const built = recordedCheck(check, check, check);
    expect(Object.keys(read.data as object)).toEqual([...Object.keys(built), 'legacy_note']);
  });
});
