/**
 * Probe regions as operators see them: which regions have probers (announced through a lease each
 * prober process holds while it runs) and which regions endpoints name.
 */
import type { LeaseRecord } from '../../platform/coordination/coordination.port.js';

/** The prefix of every prober announcement lease. */
export const ANNOUNCEMENT = 'prober-region:';

/**
 * How long the announcement of a prober that stopped renewing it (killed, or its host lost) is
 * kept: the listing shows its region's `last_seen_at` for that long, then it is left out and its
 * row removed at the next prober start. A cleanly stopped prober releases its announcement,
 * which the listing leaves out at once and the next prober start removes.
 */
export const ANNOUNCEMENT_HORIZON_MS = 24 * 3_600_000;

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
 * Regions with a prober announcement (live, or renewed within the horizon) or named by an
 * endpoint, by name. A prober is live while its announcement was renewed within twice its lease
 * period, judged on `now` against the prober's own wall clock (an operator's listing, never a
 * decision).
 */
export function summarizeRegions(leases: LeaseRecord[], endpointRegions: Iterable<string[]>, now: number): RegionSummary[] {
  const byName = new Map<string, { probers: number; lastSeen: number | null; endpoints: number }>();
  const entry = (name: string) => {
    let found = byName.get(name);
    if (!found) byName.set(name, (found = { probers: 0, lastSeen: null, endpoints: 0 }));
    return found;
  };
  for (const lease of leases) {
    if (!lease.name.startsWith(ANNOUNCEMENT) || now - lease.renewedAt > ANNOUNCEMENT_HORIZON_MS) continue;
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
