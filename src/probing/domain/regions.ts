/**
 * Probe regions as operators see them: which regions have probers (announced through a lease each
 * prober process holds while it runs) and which regions endpoints name.
 */
import type { LeaseRecord } from '../../platform/coordination/coordination.port.js';

const ANNOUNCEMENT = 'prober-region:';

/** The lease a prober process holds while it takes jobs: `prober-region:<region>:<instanceId>`. */
export function announcementLease(region: string, instanceId: string): string {
  return `${ANNOUNCEMENT}${region}:${instanceId}`;
}

export interface RegionSummary {
  name: string;
  /** Prober processes of the region renewing their announcement now. */
  probers: number;
  /** The latest announcement renewal of a prober of the region (alive or not), null if none was seen. */
  last_seen_at: string | null;
  /** Endpoints whose `regions` name it. */
  endpoints: number;
  /** Set when endpoints name the region and no prober serves it: its checks are missing and it counts as unknown. */
  warning: string | null;
}

/**
 * Regions with a prober announcement (live or not) or named by an endpoint, by name. A prober is
 * live while its announcement was renewed within twice its lease period, judged on `now` against
 * the prober's own wall clock (an operator's listing, never a decision).
 */
export function summarizeRegions(leases: LeaseRecord[], endpointRegions: Iterable<string[]>, now: number): RegionSummary[] {
  const byName = new Map<string, { probers: number; lastSeen: number | null; endpoints: number }>();
  const entry = (name: string) => {
    let found = byName.get(name);
    if (!found) byName.set(name, (found = { probers: 0, lastSeen: null, endpoints: 0 }));
    return found;
  };
  for (const lease of leases) {
    if (!lease.name.startsWith(ANNOUNCEMENT)) continue;
    const region = lease.name.slice(ANNOUNCEMENT.length).split(':')[0];
    const found = entry(region);
    if (now - lease.renewedAt <= 2 * lease.ttlMs) found.probers++;
    found.lastSeen = Math.max(found.lastSeen ?? 0, lease.renewedAt);
  }
  for (const regions of endpointRegions) for (const region of new Set(regions)) entry(region).endpoints++;
  return [...byName.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, found]) => ({
      name,
      probers: found.probers,
      last_seen_at: found.lastSeen === null ? null : new Date(found.lastSeen).toISOString(),
      endpoints: found.endpoints,
      warning: found.probers === 0 && found.endpoints > 0 ? 'No prober serves this region: its checks are missing and it counts as unknown in the quorum.' : null,
    }));
}
