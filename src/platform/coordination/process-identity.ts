import { hostname } from 'node:os';
import type { Logger } from '../logging/logger.js';
import type { CoordinationStore } from './coordination.port.js';

/**
 * Who holds a lease: `<host>:<pid>:<start>`. The identity lets a restarted process prove that a
 * lease's holder is dead (same host, and that pid is gone, or is its own pid from an earlier
 * start, as in a restarted container), so it takes the lease over at once instead of waiting
 * out the TTL while its views stand still.
 */
const identitiesOfThisProcess = new Set<string>();

export function newProcessIdentity(): string {
  const identity = `${hostname()}:${process.pid}:${Date.now().toString(36)}${identitiesOfThisProcess.size ? `-${identitiesOfThisProcess.size}` : ''}`;
  identitiesOfThisProcess.add(identity);
  return identity;
}

function parse(identity: string): { host: string; pid: number } | null {
  const parts = identity.split(':');
  if (parts.length < 3) return null;
  const pid = Number(parts[parts.length - 2]);
  return Number.isInteger(pid) && pid > 0 ? { host: parts.slice(0, -2).join(':'), pid } : null;
}

/** The holder ran on this host and its process is gone. Another host's holder is never judged. */
export function isDeadLocalHolder(holder: string, me: string): boolean {
  const theirs = parse(holder);
  const mine = parse(me);
  if (!theirs || !mine || theirs.host !== mine.host || identitiesOfThisProcess.has(holder)) return false;
  if (theirs.pid === mine.pid) return true;
  try {
    process.kill(theirs.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Frees the leases a dead process of this host still holds; returns their names. */
export async function releaseLeasesOfDeadHolders(store: CoordinationStore, me: string, logger: Logger): Promise<string[]> {
  const released: string[] = [];
  for (const lease of await store.listLeases()) {
    if (!isDeadLocalHolder(lease.owner, me)) continue;
    await store.releaseLease(lease.name, lease.owner);
    released.push(lease.name);
  }
  if (released.length > 0) logger.info({ leases: released }, 'took over the leases of a process that is gone');
  return released;
}
