import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * Who holds a lease: `<host>:<pid>:<random>`, a new random part at every start. Only the whole
 * string is ever compared (equal: the same process). Host and PID are there for operators
 * reading `listLeases` or the logs, never to judge whether a holder is alive: in containers
 * every process is PID 1 and replicas may share a hostname. That a holder is gone is proven by
 * its renewals stopping (lease-observation.ts) or, on one machine, by its owner lock
 * (sqlite/owner-locks.ts).
 */
export function newProcessIdentity(host = hostname(), pid = process.pid): string {
  return `${host}:${pid}:${randomBytes(8).toString('hex')}`;
}

/** A lease name without a trailing process identity (`prober-region:eu:<host>:<pid>:<random>` -> `prober-region:eu`). */
export function withoutProcessIdentity(leaseName: string): string {
  return leaseName.replace(/:[^:]*:\d+:[0-9a-f]{16}$/, '');
}
