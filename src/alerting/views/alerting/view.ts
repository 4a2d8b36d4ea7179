/**
 * The alerting view (projection `alerting`), defined here once: written by `projection.ts`, read
 * through `queries.ts` by the alert-status route, and by the public status pages.
 */
import type { AlertSettings, EndpointAlertsState } from '../../domain/endpoint-alerts.js';

export const ALERTING_VIEW = 'alerting';

/**
 * Alert status per endpoint: the endpoint-alerts aggregate folded from `checks-<id>` and
 * `alerts-<id>` (the state is plain arrays and records, so it is stored as is), plus the endpoint's latency settings
 * (from its endpoint stream) that the baseline needs.
 */
export const ALERT_STATUS = 'alert_status';

/** What of the aggregate's state the view does not keep (projection.ts, `viewState`). */
type NotKept = 'recentJobIds' | 'availabilityFailures' | 'latencyExceeded';

export interface AlertStatusDoc {
  id: string;
  endpoint_id: number;
  team_id: number;
  settings: AlertSettings;
  /**
   * Without the recent job ids and the endpoint's own availability and latency windows
   * (projection.ts, `viewState`); documents written before keep theirs. Each window's
   * `baselineSamples` holds only the samples after its last full chunk (see ALERT_SAMPLES);
   * documents written before chunks existed hold them all, and read the same.
   */
  state: Omit<EndpointAlertsState, NotKept> & Partial<Pick<EndpointAlertsState, NotKept>>;
  /**
   * Chunks of baseline samples moved to ALERT_SAMPLES so far, per window: `''` for the
   * endpoint's own, a region's name for its regional window. Absent: none yet.
   */
  sample_chunks?: Record<string, number>;
}

/**
 * Baseline samples out of the alert status document, SAMPLE_CHUNK at a time (issue 31). The
 * baseline may need up to MAX_BASELINE_SAMPLES (1,000) latencies, and a document holding them
 * all was rewritten whole on every check (about 5.6 KB once an endpoint had run for ~6 h at
 * 20 s). The document keeps the samples since its window's last full chunk; each full chunk is
 * written once here, and the oldest is deleted once KEPT_SAMPLE_CHUNKS newer ones hold enough.
 * The alert-status route puts them back together (`queries.ts`).
 */
export const ALERT_SAMPLES = 'alert_samples';
export const SAMPLE_CHUNK = 100;
/** Chunks kept per window: with the document's tail, at least MAX_BASELINE_SAMPLES samples. */
export const KEPT_SAMPLE_CHUNKS = 10;

/** One full chunk of a window's baseline samples, oldest first. */
export interface AlertSampleChunkDoc {
  id: string;
  endpoint_id: number;
  samples: number[];
}

/** The id of chunk `seq` of the window (`''`: the endpoint's own; else a region's name). */
export function sampleChunkId(endpointId: number, window: string, seq: number): string {
  return window === '' ? `${endpointId}:${seq}` : `${endpointId}:${window}:${seq}`;
}
