/**
 * The quorum decision of an endpoint with regions: the endpoint is down (its signal triggered)
 * while at least `quorum` regions are failing by their own rule. A region without a recent check
 * is unknown and counts neither way, so regions nobody probes can never page anyone, and cannot
 * hold an outage open either.
 */

/**
 * A region is unknown once its newest counted check is older than this many intervals. Three,
 * not two (docs/decisions.md, "A region's quorum horizon"): with two, one missed or late slot of
 * a failing region (a loaded prober, a dropped job) made it unknown at the next check of another
 * region, which ended an outage held by exactly the quorum and reopened it as a new incident
 * when the late check landed. Three absorbs one missed slot; a region whose probers are gone
 * stops holding an outage open one interval later.
 */
export const REGION_UNKNOWN_AFTER_INTERVALS = 3;

/** How old a region's newest counted check may be for the region to count (ms). */
export function regionHorizonMs(intervalSeconds: number): number {
  return REGION_UNKNOWN_AFTER_INTERVALS * intervalSeconds * 1000;
}

export interface RegionObservation {
  name: string;
  /** It has a counted check in the last `REGION_UNKNOWN_AFTER_INTERVALS` intervals. */
  known: boolean;
  /** Its own signal is triggered. */
  failing: boolean;
}

/** The regions as at a decision, each list in the endpoint's region order, and the quorum applied. */
export interface RegionEvidence {
  failing: string[];
  up: string[];
  unknown: string[];
  quorum: number;
}

export function quorumDecision(regions: readonly RegionObservation[], quorum: number): { evidence: RegionEvidence; triggered: boolean } {
  const evidence: RegionEvidence = { failing: [], up: [], unknown: [], quorum };
  for (const region of regions) {
    if (!region.known) evidence.unknown.push(region.name);
    else if (region.failing) evidence.failing.push(region.name);
    else evidence.up.push(region.name);
  }
  return { evidence, triggered: evidence.failing.length >= quorum };
}

/** "2 of 3 regions failing: eu-west, us-east; ap-south up" (unknown ones named too). */
export function regionReason(evidence: RegionEvidence): string {
  const total = evidence.failing.length + evidence.up.length + evidence.unknown.length;
  const parts = [`${evidence.failing.length} of ${total} regions failing${evidence.failing.length > 0 ? `: ${evidence.failing.join(', ')}` : ''}`];
  if (evidence.up.length > 0) parts.push(`${evidence.up.join(', ')} up`);
  if (evidence.unknown.length > 0) parts.push(`${evidence.unknown.join(', ')} unknown`);
  return parts.join('; ');
}
