/** Reads of the alerting view (names and document type: `view.ts`). */
import type { ViewReader } from '../../../platform/projections/views.js';
import { MAX_BASELINE_SAMPLES } from '../../domain/baseline.js';
import { ALERT_SAMPLES, ALERT_STATUS, ALERTING_VIEW, KEPT_SAMPLE_CHUNKS, chunkSamples, mapWindows, sampleChunkId, withTailsInState, type AlertSampleChunkDoc, type AlertStatusDoc } from './view.js';

/**
 * The endpoint's alert status document when it is the team's, else null. Fields may be missing
 * (a document written before they existed, or before the endpoint's registration was applied).
 * Its state's baseline samples are whole again: the chunks moved out of it read back in.
 */
export async function alertStatusDoc(reader: ViewReader, teamId: number, endpointId: number): Promise<Partial<AlertStatusDoc> | null> {
  const doc = (await reader.get(ALERTING_VIEW, ALERT_STATUS, endpointId)) as unknown as Partial<AlertStatusDoc> | null;
  if (!doc || doc.team_id !== teamId) return null;
  const ids = sampleChunkIds(doc);
  const chunks = ids.length === 0 ? [] : ((await reader.getMany(ALERTING_VIEW, ALERT_SAMPLES, ids)) as unknown as AlertSampleChunkDoc[]);
  return withSampleChunks(doc, chunks);
}

/** The ids of the sample chunks a document's windows keep (view.ts, ALERT_SAMPLES). */
export function sampleChunkIds(doc: Partial<AlertStatusDoc>): string[] {
  const ids: string[] = [];
  for (const [window, count] of Object.entries(doc.sample_chunks ?? {})) {
    for (let seq = Math.max(0, count - KEPT_SAMPLE_CHUNKS); seq < count; seq++) ids.push(sampleChunkId(Number(doc.endpoint_id), window, seq));
  }
  return ids;
}

/**
 * The document with each window's kept chunks put back before its own samples, the newest
 * MAX_BASELINE_SAMPLES kept: the samples the aggregate's state holds (codes or arrays, either
 * stored form). A chunk not found (never the case for what the projection wrote) leaves its
 * place empty.
 */
export function withSampleChunks(stored: Partial<AlertStatusDoc>, chunks: AlertSampleChunkDoc[]): Partial<AlertStatusDoc> {
  const doc = withTailsInState(stored);
  const byId = new Map(chunks.map((chunk) => [chunk.id, chunk]));
  if (!doc.state) return doc;
  const whole = (window: string, tail: readonly number[]): number[] => {
    const count = doc.sample_chunks?.[window] ?? 0;
    const samples: number[] = [];
    for (let seq = Math.max(0, count - KEPT_SAMPLE_CHUNKS); seq < count; seq++) {
      const chunk = byId.get(sampleChunkId(Number(doc.endpoint_id), window, seq));
      if (chunk) samples.push(...chunkSamples(chunk));
    }
    samples.push(...tail);
    return samples.length > MAX_BASELINE_SAMPLES ? samples.slice(samples.length - MAX_BASELINE_SAMPLES) : samples;
  };
  return { ...doc, state: mapWindows(doc.state, whole) };
}
