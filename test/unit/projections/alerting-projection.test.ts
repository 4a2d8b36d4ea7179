import { alertingProjection } from '../../../src/alerting/views/alerting/projection.js';
import fc from 'fast-check';
import { ALERT_SAMPLES, ALERT_STATUS, decodeSamples, encodeSamples, type AlertSampleChunkDoc, type AlertStatusDoc } from '../../../src/alerting/views/alerting/view.js';
import { sampleChunkIds, withSampleChunks } from '../../../src/alerting/views/alerting/queries.js';
import {
  ALERT_MAINTENANCE_FAILURE_ENDED,
  ALERT_MAINTENANCE_FAILURE_STARTED,
  ALERT_MAINTENANCE_RECOVERED,
  ALERT_MAINTENANCE_RECOVERY_ENDED,
  alertStatusView,
  stateFromStored,
  storedState,
  type AlertSettings,
  type EndpointAlertsState,
  type RecordCheckCommand,
} from '../../../src/alerting/domain/endpoint-alerts.js';
import { DEFAULT_CONFIGURATION } from '../../../src/monitoring/domain/endpoint.js';
import { BatchViewTransaction } from '../../../src/platform/projections/view-transaction.js';
import type { Doc } from '../../../src/platform/read-store/read-store.port.js';
import { given, type GivenEvent, type ProjectionOutcome } from '../../support/projection-spec.js';
import { MemoryReadStore } from '../analytics/support/memory-store.js';
import { command, run, type Step } from '../alerting/support.js';

const T = '2026-11-23T10:00:00.000Z';

describe('alerting projection (alert status)', () => {
  it('folds the checks stream with the endpoint-alerts aggregate and keeps the latency settings it needs', async () => {
    // Three failing checks in a window of three trigger the availability signal.
    const steps = run([command({ success: false }), command({ success: false }), command({ success: false })], undefined);
    const checkEvents: GivenEvent[] = steps.flatMap((step) => step.events.map((event) => ({ type: event.type, data: event.data, streamId: 'checks-7' })));
    const views = await given(alertingProjection, [
      {
        type: 'EndpointRegistered',
        data: { endpoint_id: 7, team_id: 1, project_id: 3, name: 'API', description: '', configuration: { ...DEFAULT_CONFIGURATION, url: 'https://example.com', latency_sensitivity: 5 }, verification_token: 't', configuration_version: 1, created_at: T },
      },
      { type: 'EndpointReconfigured', data: { endpoint_id: 7, team_id: 1, project_id: 3, changes: { latency_min_increase_ms: 40 }, configuration_version: 2, updated_at: T } },
      ...checkEvents,
    ]);
    const doc = views.document(ALERT_STATUS, '7') as any;
    expect(doc).toMatchObject({ endpoint_id: 7, team_id: 1 });
    expect(doc.settings).toMatchObject({ latency_sensitivity: 5, latency_min_increase_ms: 40 });
    expect(doc.state.signals.availability).toMatchObject({ type: 'availability', state: 'triggered' });
    const { recentJobIds: _jobs, availabilityFailures: _failures, latencyExceeded: _exceeded, ...state } = storedState(steps[steps.length - 1].state);
    expect(doc.state).toEqual(state);
  });

  it('keeps no job ids nor the endpoint\'s own windows in the view, and the alert status it answers is the aggregate\'s', async () => {
    // 120 probed checks, each of its own job, one in ten failing, some slow.
    const commands = Array.from({ length: 120 }, (_, i) => command({ success: i % 10 !== 9, latency_ms: i % 7 === 0 ? 900 : 80 + (i % 5) }));
    const steps = run(commands, undefined);
    const folded = steps[steps.length - 1].state;
    expect(folded.recentJobIds).toHaveLength(100);
    const views = await given(alertingProjection, [
      { type: 'EndpointRegistered', data: { endpoint_id: 7, team_id: 1, project_id: 3, name: 'API', description: '', configuration: { ...DEFAULT_CONFIGURATION, url: 'https://example.com' }, verification_token: 't', configuration_version: 1, created_at: T } },
      ...steps.flatMap((step) => step.events.map((event): GivenEvent => ({ type: event.type, data: event.data, streamId: event.type === 'CheckRecorded' ? 'checks-7' : 'alerts-7' }))),
    ]);
    const doc = views.document(ALERT_STATUS, '7') as any;
    expect(JSON.stringify(doc)).not.toContain('job-');
    expect(Object.keys(doc.state)).not.toEqual(expect.arrayContaining(['availabilityFailures']));
    expect(Object.keys(doc.state)).not.toEqual(expect.arrayContaining(['latencyExceeded']));
    const read = readBack(views, '7') as any;
    const now = new Date(T);
    const ids = { team_id: 1, endpoint_id: 7 };
    expect(alertStatusView(viewedState(read.state), ids, doc.settings, now)).toEqual(alertStatusView(folded, ids, doc.settings, now));
    expect(alertStatusView(folded, ids, doc.settings, now).latency_baseline).not.toBeNull();
  });

  it('keeps the failing and recovered states during maintenance, which status pages read', async () => {
    const at = (minute: number) => `2026-11-23T10:0${minute}:00.000Z`;
    const event = (type: string, minute: number, extra: Record<string, unknown> = {}): GivenEvent => ({ type, data: { endpoint_id: 7, team_id: 1, project_id: 3, check_id: minute, at: at(minute), ...extra }, streamId: 'alerts-7' });
    const state = async (events: GivenEvent[]) => ((await given(alertingProjection, [registered(), ...events])).document(ALERT_STATUS, '7') as any).state;
    expect(await state([event(ALERT_MAINTENANCE_FAILURE_STARTED, 1)])).toMatchObject({ maintenanceFailingSince: at(1) });
    expect(await state([event(ALERT_MAINTENANCE_FAILURE_STARTED, 1), event(ALERT_MAINTENANCE_FAILURE_ENDED, 2, { ended_by: 'recovered' })])).not.toHaveProperty('maintenanceFailingSince');
    expect(await state([event(ALERT_MAINTENANCE_RECOVERED, 3)])).toMatchObject({ maintenanceRecoveredSince: at(3) });
    expect(await state([event(ALERT_MAINTENANCE_RECOVERED, 3), event(ALERT_MAINTENANCE_RECOVERY_ENDED, 4, { ended_by: 'failing' })])).not.toHaveProperty('maintenanceRecoveredSince');
  });
});

/** The state the alert-status route answers from: the document's, without the windows the view does not keep. */
function viewedState(state: Partial<AlertStatusDoc>['state']): EndpointAlertsState {
  return stateFromStored({ recentJobIds: [], availabilityFailures: [], latencyExceeded: [], ...state! });
}

/** What the alert-status route reads: the document with its sample chunks put back (queries.ts). */
function readBack(views: ProjectionOutcome, id: string): Partial<AlertStatusDoc> {
  const doc = views.document(ALERT_STATUS, id) as unknown as AlertStatusDoc;
  const chunks = sampleChunkIds(doc).flatMap((chunk) => (views.document(ALERT_SAMPLES, chunk) as unknown as AlertSampleChunkDoc | undefined) ?? []);
  return withSampleChunks(doc, chunks);
}

function registered(configuration: Partial<AlertSettings> = {}): GivenEvent {
  return {
    type: 'EndpointRegistered',
    data: { endpoint_id: 7, team_id: 1, project_id: 3, name: 'API', description: '', configuration: { ...DEFAULT_CONFIGURATION, url: 'https://example.com', ...configuration }, verification_token: 't', configuration_version: 1, created_at: T },
  };
}

function eventsOf(steps: Step[]): GivenEvent[] {
  return steps.flatMap((step) => step.events.map((event): GivenEvent => ({ type: event.type, data: event.data, streamId: event.type === 'CheckRecorded' ? 'checks-7' : 'alerts-7' })));
}

describe('alerting projection: baseline samples out of the per-check document (issue 31)', () => {
  // The whole window counts: min_samples 1,000 makes the baseline read every sample kept.
  const settings = { latency_min_samples: 1000 };

  it('keeps under a chunk of samples in the document, and the status read back is the aggregate\'s, over the full 1,000-sample window', async () => {
    const commands = Array.from({ length: 1_350 }, (_, i) => command({ success: i % 50 !== 49, latency_ms: 60 + ((i * 37) % 90) }, settings));
    const steps = run(commands, undefined);
    const folded = steps[steps.length - 1].state;
    expect(folded.baselineSamples).toHaveLength(1000);
    const views = await given(alertingProjection, [registered(settings), ...eventsOf(steps)]);
    const doc = views.document(ALERT_STATUS, '7') as unknown as AlertStatusDoc;
    // The document a check rewrites holds the samples since the last full chunk only.
    expect(doc.state.baselineSamples.length).toBeLessThan(100);
    // The rest is mostly the two 100-check windows of the signals (the whole state was ~6 KB).
    expect(JSON.stringify(doc).length).toBeLessThan(2_500);
    // Old chunks go: ten are kept (1,000 samples) beside the document's own.
    expect(views.documents(ALERT_SAMPLES)).toHaveLength(10);
    const read = readBack(views, '7');
    expect(read.state!.baselineSamples).toEqual(folded.baselineSamples.toArray());
    const now = new Date(T);
    const ids = { team_id: 1, endpoint_id: 7 };
    const answered = alertStatusView(viewedState(read.state), ids, read.settings!, now);
    expect(answered).toEqual(alertStatusView(folded, ids, read.settings!, now));
    expect(answered.latency_baseline?.samples).toBe(1000);
  });

  it('chunks each region\'s samples on their own, and reads them back as the aggregate holds them', async () => {
    const regionSettings: Partial<AlertSettings> = { ...settings, regions: ['eu', 'us'], region_quorum: 1, interval_seconds: 60 };
    const regional = (i: number): RecordCheckCommand => {
      const cmd = command({ latency_ms: 40 + ((i * 13) % 70) }, regionSettings);
      return { ...cmd, region: i % 3 === 0 ? 'us' : 'eu', regional: true };
    };
    const steps = run(Array.from({ length: 700 }, (_, i) => regional(i)), undefined);
    const folded = steps[steps.length - 1].state;
    const views = await given(alertingProjection, [registered(regionSettings), ...eventsOf(steps)]);
    const doc = views.document(ALERT_STATUS, '7') as unknown as AlertStatusDoc;
    expect(doc.sample_chunks).toEqual({ eu: 4, us: 2 });
    const read = readBack(views, '7');
    for (const region of ['eu', 'us']) expect(read.state!.regionWindows![region].baselineSamples).toEqual(folded.regionWindows![region].baselineSamples.toArray());
    const now = new Date(T);
    const ids = { team_id: 1, endpoint_id: 7 };
    expect(alertStatusView(viewedState(read.state), ids, read.settings!, now)).toEqual(alertStatusView(folded, ids, read.settings!, now));
  });

  it('a document written with every sample in it reads the same, and gives up its chunks on its next check', async () => {
    const commands = Array.from({ length: 1_001 }, (_, i) => command({ latency_ms: 50 + (i % 40) }, settings));
    const steps = run(commands, undefined);
    const before = steps[steps.length - 2].state;
    // As the view stood before chunks: the whole state (without job ids) in the document.
    const { recentJobIds: _jobs, ...kept } = storedState(before);
    const old: AlertStatusDoc = { id: '7', endpoint_id: 7, team_id: 1, settings: { ...DEFAULT_CONFIGURATION, ...settings } as AlertSettings, state: kept };
    expect(withSampleChunks(old, [])).toEqual(old);
    const store = new MemoryReadStore();
    for (const spec of alertingProjection.collections) await store.ensureCollection(spec);
    await store.commit([{ op: 'put', collection: ALERT_STATUS, doc: old as unknown as Doc }]);
    const transaction = new BatchViewTransaction(store, (collection) => collection);
    const [check] = eventsOf(steps.slice(-1));
    await alertingProjection.handlers.CheckRecorded({ id: 'e', streamId: 'checks-7', type: 'CheckRecorded', schemaVersion: 1, data: check.data, metadata: {} as never, revision: 1000, position: 1, recordedAt: T }, transaction);
    await store.commit(transaction.writes());
    const doc = (await store.get(ALERT_STATUS, '7')) as unknown as AlertStatusDoc;
    expect(doc.state.baselineSamples).toEqual([]);
    expect(doc.sample_chunks).toEqual({ '': 10 });
    const chunks = (await store.getMany(ALERT_SAMPLES, sampleChunkIds(doc))) as unknown as AlertSampleChunkDoc[];
    expect(withSampleChunks(doc, chunks).state!.baselineSamples).toEqual(steps[steps.length - 1].state.baselineSamples.toArray());
  });
});

describe('alerting projection: baseline samples coded (issue 31)', () => {
  const settings = { latency_min_samples: 1000 };

  it('codes any whole, non-negative latencies and reads them back exactly', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer({ min: 0, max: 600 }), fc.integer({ min: 0, max: 2 ** 31 - 1 })), { maxLength: 300 }), (samples) => {
        const code = encodeSamples(samples);
        expect(code).toMatch(/^[0-9A-Za-z_-]*$/);
        expect(decodeSamples(code!)).toEqual(samples);
        // What the projection does with a window's new samples: their code follows the code it had.
        const cut = Math.floor(samples.length / 3);
        expect(encodeSamples(samples.slice(0, cut))! + encodeSamples(samples.slice(cut), cut === 0 ? 0 : samples[cut - 1])!).toBe(code);
      }),
    );
  });

  it('takes a character for a sample within 15 ms of the one before, two within 511 ms', () => {
    expect(encodeSamples([])).toBe('');
    expect(encodeSamples([0, 15, 0, 8, 1])!.length).toBe(1 + 1 + 1 + 1 + 1);
    expect(encodeSamples([120, 131, 118, 620])!.length).toBe(2 + 1 + 1 + 2);
    expect(decodeSamples(encodeSamples([120, 131, 118, 620, 2 ** 31 - 1, 0])!)).toEqual([120, 131, 118, 620, 2 ** 31 - 1, 0]);
  });

  it('leaves a sample the code cannot hold to the plain array, and refuses a code it did not write', () => {
    for (const odd of [1.5, -1, 2 ** 31, Number.NaN]) expect(encodeSamples([100, odd])).toBeNull();
    expect(() => decodeSamples('1"')).toThrow(/unexpected character/);
    expect(() => decodeSamples('1W')).toThrow(/ends inside a sample/);
  });

  it('stores the document\'s tail and each chunk coded, about half the bytes of the arrays, and reads back the aggregate\'s samples', async () => {
    const commands = Array.from({ length: 1_250 }, (_, i) => command({ latency_ms: 120 + ((i * 37) % 90) }, settings));
    const steps = run(commands, undefined);
    const folded = steps[steps.length - 1].state;
    const views = await given(alertingProjection, [registered(settings), ...eventsOf(steps)]);
    const doc = views.document(ALERT_STATUS, '7') as unknown as AlertStatusDoc;
    expect(doc.state.baselineSamples).toEqual([]);
    expect(decodeSamples(doc.sample_tails!['']!)).toEqual(folded.baselineSamples.toArray().slice(-50));
    const chunks = views.documents(ALERT_SAMPLES) as unknown as AlertSampleChunkDoc[];
    expect(chunks).toHaveLength(10);
    for (const chunk of chunks) {
      expect(chunk.samples).toBeUndefined();
      expect(chunk.code!.length).toBeLessThan(JSON.stringify(decodeSamples(chunk.code!)).length / 2);
    }
    expect(readBack(views, '7').state!.baselineSamples).toEqual(folded.baselineSamples.toArray());
  });

  it('reads a document and chunks written as arrays (before codes), and codes them from its next check on', async () => {
    // 1,240 checks: the old form stood after 1,149 (chunk 11 written, 49 samples in the document).
    const commands = Array.from({ length: 1_240 }, (_, i) => command({ latency_ms: 60 + ((i * 13) % 70) }, settings));
    const steps = run(commands, undefined);
    const before = steps[1_148].state;
    const all = before.baselineSamples.toArray();
    expect(all).toHaveLength(1000);
    const old: AlertStatusDoc = {
      id: '7',
      endpoint_id: 7,
      team_id: 1,
      settings: { ...DEFAULT_CONFIGURATION, ...settings } as AlertSettings,
      state: (({ recentJobIds: _j, availabilityFailures: _a, latencyExceeded: _l, ...kept }) => ({ ...kept, baselineSamples: all.slice(-49) }))(storedState(before)),
      sample_chunks: { '': 11 },
    };
    const oldChunks: AlertSampleChunkDoc[] = Array.from({ length: 10 }, (_, i) => ({ id: `7:${i + 1}`, endpoint_id: 7, samples: all.slice(-49 - 100 * (10 - i), -49 - 100 * (9 - i)) }));
    const store = new MemoryReadStore();
    for (const spec of alertingProjection.collections) await store.ensureCollection(spec);
    await store.commit([{ op: 'put', collection: ALERT_STATUS, doc: old as unknown as Doc }, ...oldChunks.map((doc) => ({ op: 'put' as const, collection: ALERT_SAMPLES, doc: doc as unknown as Doc }))]);
    const readStored = async () => {
      const doc = (await store.get(ALERT_STATUS, '7')) as unknown as AlertStatusDoc;
      const chunks = (await store.getMany(ALERT_SAMPLES, sampleChunkIds(doc))) as unknown as AlertSampleChunkDoc[];
      return { doc, whole: withSampleChunks(doc, chunks) };
    };
    expect((await readStored()).whole.state!.baselineSamples).toEqual(all);
    // The checks after it, through the projection's handler: one more chunk (coded) among the old ones.
    for (const [i, check] of eventsOf(steps.slice(1_149)).entries()) {
      const transaction = new BatchViewTransaction(store, (collection) => collection);
      await alertingProjection.handlers[check.type]({ id: `e${i}`, streamId: check.streamId!, type: check.type, schemaVersion: 1, data: check.data, metadata: {} as never, revision: 1_149 + i, position: 1_149 + i, recordedAt: T }, transaction);
      await store.commit(transaction.writes());
    }
    const { doc, whole } = await readStored();
    expect(doc.sample_chunks).toEqual({ '': 12 });
    expect(doc.state.baselineSamples).toEqual([]);
    expect(typeof doc.sample_tails!['']).toBe('string');
    expect(((await store.get(ALERT_SAMPLES, '7:11')) as unknown as AlertSampleChunkDoc).code).toEqual(expect.any(String));
    expect(((await store.get(ALERT_SAMPLES, '7:10')) as unknown as AlertSampleChunkDoc).samples).toHaveLength(100);
    expect(whole.state!.baselineSamples).toEqual(steps[steps.length - 1].state.baselineSamples.toArray());
    const now = new Date(T);
    const ids = { team_id: 1, endpoint_id: 7 };
    expect(alertStatusView(viewedState(whole.state), ids, whole.settings!, now)).toEqual(alertStatusView(steps[steps.length - 1].state, ids, whole.settings!, now));
  });
});
