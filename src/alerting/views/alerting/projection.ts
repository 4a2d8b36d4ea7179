import {
  ALERT_SIGNAL_INCIDENT_LINKED,
  ALERT_SIGNAL_RECOVERED,
  ALERT_SIGNAL_TRIGGERED,
  ALERT_SIGNALS_CARRIED_OVER,
  ALERT_SIGNAL_FLAPPING_STARTED,
  ALERT_SIGNAL_FLAPPING_STOPPED,
  ALERT_MAINTENANCE_FAILURE_ENDED,
  ALERT_MAINTENANCE_FAILURE_STARTED,
  ALERT_MAINTENANCE_RECOVERED,
  ALERT_MAINTENANCE_RECOVERY_ENDED,
  CHECK_RECORDED,
  REGION_SIGNAL_RECOVERED,
  REGION_SIGNAL_TRIGGERED,
  evolve,
  initialState,
  stateFromStored,
  storedState,
  type EndpointAlertsEvent,
  type EndpointAlertsState,
  type StoredAlertsState,
} from '../../domain/endpoint-alerts.js';
import {
  DEFAULT_LATENCY_SETTINGS,
  type LatencySettings,
} from '../../../monitoring/domain/endpoint-configuration.js';
import {
  ENDPOINT_RECONFIGURED,
  ENDPOINT_REGISTERED,
  type EndpointReconfiguredData,
  type EndpointRegisteredData,
} from '../../../monitoring/domain/events.js';
import { ALERT_SAMPLES, ALERT_STATUS, ALERTING_VIEW, KEPT_SAMPLE_CHUNKS, SAMPLE_CHUNK, encodeSamples, mapWindows, sampleChunk, sampleChunkId, stateWithTails, type AlertStatusDoc } from './view.js';
import type { Doc } from '../../../platform/read-store/read-store.port.js';
import { defineProjection, type ProjectionHandler, type ViewTransaction } from '../../../platform/projections/projection.js';

/** The latency settings, and what the region quorum needs (absent from documents written before regions). */
const LATENCY_KEYS = [...Object.keys(DEFAULT_LATENCY_SETTINGS), 'regions', 'region_quorum', 'interval_seconds'] as Array<keyof LatencySettings>;

/** What the view does not keep of the state (`viewState`), empty for the aggregate's evolve. */
const NOT_KEPT = { recentJobIds: [], availabilityFailures: [], latencyExceeded: [] } as const satisfies Partial<StoredAlertsState>;

async function current(views: ViewTransaction, endpointId: number, teamId: number): Promise<AlertStatusDoc> {
  const doc = (await views.get(ALERT_STATUS, String(endpointId))) as AlertStatusDoc | null;
  return doc ?? { id: String(endpointId), endpoint_id: endpointId, team_id: teamId, settings: { ...DEFAULT_LATENCY_SETTINGS }, state: viewState(initialState()) };
}

/**
 * The state as the view keeps it: without the aggregate's recent job ids, nor the endpoint's own
 * availability and latency windows (nor that of the checks a maintenance window hid). The job
 * ids are what a command checks a redelivered probe
 * job against, and the windows what the judge decides signal transitions on: both are folded
 * from the log by the command side, never from this view, and no read of the view uses them (the
 * signals themselves come from the signal events; a region's windows, which the status shows,
 * stay). Kept, they were most of the document (100 ids of about 17 bytes; up to 100 booleans
 * each window, about 1.2 KB), rewritten on every check (issue 31). A document written with them
 * reads the same. The windows kept are stored as arrays (`storedState`).
 */
function viewState(state: EndpointAlertsState): AlertStatusDoc['state'] {
  const { recentJobIds: _jobs, availabilityFailures: _failures, latencyExceeded: _exceeded, maintenanceChecks: _hidden, ...kept } = storedState(state);
  return kept;
}

const onSignalEvent: ProjectionHandler = async (event, views) => {
  const data = event.data as { endpoint_id: number; team_id?: number };
  const doc = await current(views, data.endpoint_id, data.team_id ?? 0);
  const before = stateWithTails(doc);
  const state = evolve(stateFromStored({ ...before, ...NOT_KEPT }), event as unknown as EndpointAlertsEvent);
  views.put(ALERT_STATUS, storedDoc(doc, viewState(state), before, views) as unknown as Doc);
};

/**
 * The document with `state` as the view stores it: each window's full chunks of baseline
 * samples moved out (view.ts, ALERT_SAMPLES; a window's oldest chunk deleted once
 * KEPT_SAMPLE_CHUNKS newer ones hold its samples), and the samples after them coded in
 * `sample_tails` (view.ts, `encodeSamples`). `state` holds every window's samples as arrays,
 * `before` as `doc` held them: a window that only gained samples has them coded onto its code,
 * not the whole window again. A document from before chunks (every sample in it) gives up its
 * chunks on its next event.
 */
function storedDoc(doc: AlertStatusDoc, state: AlertStatusDoc['state'], before: AlertStatusDoc['state'], views: ViewTransaction): AlertStatusDoc {
  let chunks = doc.sample_chunks;
  let tails: Record<string, string> | undefined;
  const store = (window: string, samples: readonly number[]): readonly number[] => {
    let seq = chunks?.[window] ?? 0;
    let from = 0;
    for (; samples.length - from >= SAMPLE_CHUNK; from += SAMPLE_CHUNK, seq++) {
      const chunk = sampleChunk(sampleChunkId(doc.endpoint_id, window, seq), doc.endpoint_id, samples.slice(from, from + SAMPLE_CHUNK));
      views.put(ALERT_SAMPLES, chunk as unknown as Doc);
      if (seq >= KEPT_SAMPLE_CHUNKS) views.delete(ALERT_SAMPLES, sampleChunkId(doc.endpoint_id, window, seq - KEPT_SAMPLE_CHUNKS));
    }
    if (from > 0) chunks = { ...chunks, [window]: seq };
    const tail = from === 0 ? samples : samples.slice(from);
    if (tail.length === 0) return tail;
    const had = window === '' ? before.baselineSamples : before.regionWindows?.[window]?.baselineSamples;
    const hadCode = doc.sample_tails?.[window];
    const code = from === 0 && hadCode !== undefined && had !== undefined && startsWith(tail, had) ? appendedCode(hadCode, had, tail) : encodeSamples(tail);
    if (code === null) return tail;
    (tails ??= {})[window] = code;
    return [];
  };
  return { ...doc, state: mapWindows(state, store), sample_chunks: chunks, sample_tails: tails };
}

/** Whether `samples` begins with every one of `prefix`. */
function startsWith(samples: readonly number[], prefix: readonly number[]): boolean {
  if (samples.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (samples[i] !== prefix[i]) return false;
  return true;
}

/** The code of `samples`, given the code of their first `had.length` (`had`). */
function appendedCode(hadCode: string, had: readonly number[], samples: readonly number[]): string | null {
  if (samples.length === had.length) return hadCode;
  const added = encodeSamples(samples.slice(had.length), had.length === 0 ? 0 : had[had.length - 1]);
  return added === null ? null : hadCode + added;
}

/** Alert status per endpoint (names and document type: view.ts). */
export const alertingProjection = defineProjection({
  name: ALERTING_VIEW,
  // 2: the failing and recovered states during maintenance (status pages read them).
  version: 2,
  collections: [
    { name: ALERT_STATUS, indexes: [{ fields: ['team_id'] }] },
    // Read and written by id only.
    { name: ALERT_SAMPLES, indexes: [] },
  ],
  // Every event it takes reads its endpoint's document: a batch's are read at once.
  // Nothing else writes its collections, and the handlers build new documents (KeptDocuments).
  keepsDocuments: true,
  prefetch: (event) => [[ALERT_STATUS, String((event.data as { endpoint_id: number }).endpoint_id)]],
  handlers: {
    [ENDPOINT_REGISTERED]: async (event, views) => {
      const data = event.data as EndpointRegisteredData;
      const doc = await current(views, data.endpoint_id, data.team_id);
      const settings = { ...doc.settings };
      for (const key of LATENCY_KEYS) (settings as Record<string, unknown>)[key] = data.configuration[key];
      views.put(ALERT_STATUS, { ...doc, team_id: data.team_id, settings } as unknown as Doc);
    },
    [ENDPOINT_RECONFIGURED]: async (event, views) => {
      const data = event.data as EndpointReconfiguredData;
      const doc = await current(views, data.endpoint_id, data.team_id);
      const settings = { ...doc.settings };
      for (const key of LATENCY_KEYS) {
        if (data.changes[key] !== undefined) (settings as Record<string, unknown>)[key] = data.changes[key];
      }
      views.put(ALERT_STATUS, { ...doc, settings } as unknown as Doc);
    },
    [CHECK_RECORDED]: onSignalEvent,
    [ALERT_SIGNAL_TRIGGERED]: onSignalEvent,
    [ALERT_SIGNAL_RECOVERED]: onSignalEvent,
    [ALERT_SIGNAL_INCIDENT_LINKED]: onSignalEvent,
    [ALERT_SIGNALS_CARRIED_OVER]: onSignalEvent,
    [ALERT_SIGNAL_FLAPPING_STARTED]: onSignalEvent,
    [ALERT_SIGNAL_FLAPPING_STOPPED]: onSignalEvent,
    [REGION_SIGNAL_TRIGGERED]: onSignalEvent,
    [REGION_SIGNAL_RECOVERED]: onSignalEvent,
    [ALERT_MAINTENANCE_FAILURE_STARTED]: onSignalEvent,
    [ALERT_MAINTENANCE_FAILURE_ENDED]: onSignalEvent,
    [ALERT_MAINTENANCE_RECOVERED]: onSignalEvent,
    [ALERT_MAINTENANCE_RECOVERY_ENDED]: onSignalEvent,
  },
});
