/**
 * The alerting view (projection `alerting`), defined here once: written by `projection.ts`, read
 * through `queries.ts` by the alert-status route, and by the public status pages.
 */
import type { AlertSettings, StoredAlertsState } from '../../domain/endpoint-alerts.js';
import { DigitCode } from '../../../platform/digit-code.js';

export const ALERTING_VIEW = 'alerting';

/**
 * Alert status per endpoint: the endpoint-alerts aggregate folded from `checks-<id>` and
 * `alerts-<id>` (the state with its windows as arrays, `storedState`), plus the endpoint's latency settings
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
   * documents written before chunks existed hold them all, and read the same. A window whose
   * samples are coded in `sample_tails` keeps an empty array here.
   */
  state: Omit<StoredAlertsState, NotKept> & Partial<Pick<StoredAlertsState, NotKept>>;
  /**
   * Chunks of baseline samples moved to ALERT_SAMPLES so far, per window: `''` for the
   * endpoint's own, a region's name for its regional window. Absent: none yet.
   */
  sample_chunks?: Record<string, number>;
  /**
   * Per window (as `sample_chunks`), its samples after its last full chunk, coded
   * (`encodeSamples`: about half the bytes of the JSON array). Absent for a window, in documents
   * written before codes and for samples the code cannot hold: the state's array holds them.
   * The state's array is left empty rather than out, so that a process of the version before
   * reads no samples there instead of failing.
   */
  sample_tails?: Record<string, string>;
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
  /** The samples, coded (`encodeSamples`). */
  code?: string;
  /** The samples, in chunks written before codes (or holding a sample the code cannot). */
  samples?: number[];
}

/** The id of chunk `seq` of the window (`''`: the endpoint's own; else a region's name). */
export function sampleChunkId(endpointId: number, window: string, seq: number): string {
  return window === '' ? `${endpointId}:${seq}` : `${endpointId}:${window}:${seq}`;
}

/** A chunk of samples as the view stores it: coded when the code can hold them all. */
export function sampleChunk(id: string, endpointId: number, samples: readonly number[]): AlertSampleChunkDoc {
  const code = encodeSamples(samples);
  return code === null ? { id, endpoint_id: endpointId, samples: [...samples] } : { id, endpoint_id: endpointId, code };
}

/** A chunk's samples, oldest first, in either stored form. */
export function chunkSamples(chunk: AlertSampleChunkDoc): number[] {
  return chunk.code === undefined ? chunk.samples ?? [] : decodeSamples(chunk.code);
}

/** The state with each window's samples (`''`: the endpoint's own; else a region's) replaced by `samplesOf(window, samples)`. */
export function mapWindows(state: AlertStatusDoc['state'], samplesOf: (window: string, samples: readonly number[]) => readonly number[]): AlertStatusDoc['state'] {
  // Spreads that keep the object's shape (an existing key overwritten, none removed): a document
  // of a dictionary-mode shape costs more to freeze, keep and serialise on every check.
  const mapped = { ...state, baselineSamples: samplesOf('', state.baselineSamples) };
  if (state.regionWindows) {
    mapped.regionWindows = Object.fromEntries(Object.entries(state.regionWindows).map(([region, windows]) => [region, { ...windows, baselineSamples: samplesOf(region, windows.baselineSamples) }]));
  }
  return mapped;
}

/** The document's state with its coded tails back in its windows' arrays (what the aggregate folds), in either stored form. */
export function stateWithTails(doc: Pick<AlertStatusDoc, 'state' | 'sample_tails'>): AlertStatusDoc['state'] {
  const tails = doc.sample_tails;
  if (tails === undefined) return doc.state;
  return mapWindows(doc.state, (window, samples) => (tails[window] === undefined ? samples : decodeSamples(tails[window])));
}

/** The document with its coded tails back in its state's arrays, in either stored form. */
export function withTailsInState<D extends Partial<AlertStatusDoc>>(doc: D): D {
  if (doc.sample_tails === undefined || doc.state === undefined) return doc;
  return { ...doc, state: stateWithTails(doc as Pick<AlertStatusDoc, 'state' | 'sample_tails'>), sample_tails: undefined };
}

/**
 * The code of baseline samples (issue 31). Latencies are whole milliseconds, and a JSON array of
 * them costs 2-4 bytes a sample in a document's JSONB (a header byte and the digits): most of
 * what an endpoint's alert status adds while its baseline fills. Coded, each sample is its
 * difference from the one before (the first's from 0), zigzag-mapped to a non-negative integer
 * (0, -1, 1, -2 ... as 0, 1, 2, 3 ...) and written in base 32 (`DigitCode`: one of the first 32
 * characters ends a sample, one of the last 32 says a digit follows). A sample within 15 ms of the one before takes one character, within 511 ms two. The
 * characters need no JSON escape, so SQLite keeps the string as written.
 */
const SAMPLE_DIGITS = new DigitCode('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_');

/** The largest sample the code holds (about 24 days in ms): differences stay exact in a double. */
const MAX_CODED = 2 ** 31 - 1;

/** A sample the code holds: a whole, non-negative number of ms up to MAX_CODED. */
function codable(sample: number): boolean {
  return Number.isInteger(sample) && sample >= 0 && sample <= MAX_CODED;
}

/**
 * The samples (oldest first) as a code, or null when one of them is not a codable latency.
 * `previous`: the sample before the first, when the code is to follow the code of those before.
 */
export function encodeSamples(samples: readonly number[], previous = 0): string | null {
  let code = '';
  for (const sample of samples) {
    if (!codable(sample)) return null;
    const difference = sample - previous;
    previous = sample;
    code += SAMPLE_DIGITS.write(difference >= 0 ? 2 * difference : -2 * difference - 1);
  }
  return code;
}

/** The samples a code holds, oldest first (`encodeSamples`'s inverse). */
export function decodeSamples(code: string): number[] {
  const samples: number[] = [];
  const cursor = { at: 0 };
  let previous = 0;
  while (cursor.at < code.length) {
    const value = SAMPLE_DIGITS.read(code, cursor);
    if (Number.isNaN(value)) throw new Error(cursor.at < code.length ? `Baseline sample code: unexpected character at ${cursor.at}` : 'Baseline sample code: it ends inside a sample');
    previous += value % 2 === 0 ? value / 2 : -(value + 1) / 2;
    samples.push(previous);
  }
  return samples;
}
