/**
 * The quorum decision of an endpoint with regions: the endpoint is down (its signal triggered)
 * while at least `quorum` regions are failing by their own rule. A region without a recent check
 * is unknown and counts neither way, so regions nobody probes can never page anyone, and cannot
 * hold an outage open either.
 */

export interface RegionObservation {
  name: string;
  /** It has a counted check in the last two intervals. */
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
