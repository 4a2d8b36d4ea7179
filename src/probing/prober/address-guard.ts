/**
 * Refuses connections to addresses inside the service's own network (SSRF guard).
 *
 * The check runs inside the socket's DNS lookup, so the address that was checked is the address
 * the socket connects to: a hostname cannot resolve to a public address for the check and to a
 * private one for the connection (no DNS-rebinding gap). IP literals skip Node's lookup, so the
 * connector checks them before connecting.
 */
import { promises as dnsPromises } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { buildConnector } from 'undici';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a hostname to every address it has; rejects with a Node DNS error (`code` ENOTFOUND …). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const BLOCKED_ADDRESS = 'E_PROBE_BLOCKED_ADDRESS';

export class BlockedAddressError extends Error {
  readonly code = BLOCKED_ADDRESS;

  constructor(
    readonly hostname: string,
    /** ipaddr.js range name of the refused address, e.g. `loopback`, `private`, `linkLocal`. */
    readonly range: string,
  ) {
    super(`${hostname} resolves to a ${range} address`);
    this.name = 'BlockedAddressError';
  }
}

/**
 * The range an address belongs to when it must not be probed, or null when it may be.
 * Only public unicast addresses are allowed: loopback, private (RFC 1918), unique-local,
 * link-local (cloud metadata 169.254.169.254), unspecified, CGNAT, multicast, broadcast and
 * reserved ranges are refused, as are IPv4-mapped IPv6 forms of them. IPv6 transition prefixes
 * (NAT64, 6to4, Teredo) can embed any IPv4 address and are refused too.
 */
export function blockedRange(ip: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // process() turns ::ffff:10.0.0.1 into 10.0.0.1, so mapped forms get the IPv4 verdict.
    parsed = ipaddr.process(ip);
  } catch {
    return 'unparseable';
  }
  const range = parsed.range();
  return range === 'unicast' ? null : range;
}

export const systemResolver: Resolver = async (hostname) => {
  const addresses = await dnsPromises.lookup(hostname, { all: true, verbatim: true });
  return addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** A `lookup` for net/tls.connect that resolves with `resolve` and refuses blocked addresses. */
export function createGuardedLookup(blockPrivate: boolean, resolve: Resolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    resolveChecked(hostname, options.family, blockPrivate, resolve).then(
      (addresses) => {
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}

async function resolveChecked(
  hostname: string,
  family: number | string | undefined,
  blockPrivate: boolean,
  resolve: Resolver,
): Promise<ResolvedAddress[]> {
  const wanted = family === 4 || family === 'IPv4' ? 4 : family === 6 || family === 'IPv6' ? 6 : 0;
  const addresses = (await resolve(hostname)).filter((a) => wanted === 0 || a.family === wanted);
  if (addresses.length === 0) throw notFound(hostname);
  if (blockPrivate) {
    // One private answer refuses the host: mixing public and private answers is a rebinding trick.
    for (const { address } of addresses) {
      const range = blockedRange(address);
      if (range) throw new BlockedAddressError(hostname, range);
    }
  }
  return addresses;
}

function notFound(hostname: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
    code: 'ENOTFOUND',
    syscall: 'getaddrinfo',
    hostname,
  });
}

export interface GuardedConnectorOptions {
  blockPrivate: boolean;
  resolve?: Resolver;
  /** Upper bound for TCP + TLS connect; the probe's own timeout usually fires first. */
  connectTimeoutMs?: number;
}

/** An undici `connect` function applying the guard to hostnames and IP literals alike. */
export function createGuardedConnector(options: GuardedConnectorOptions): buildConnector.connector {
  const { blockPrivate, resolve, connectTimeoutMs = 30_000 } = options;
  const useCustomLookup = blockPrivate || resolve !== undefined;
  const connect = buildConnector({
    timeout: connectTimeoutMs,
    ...(useCustomLookup ? { lookup: createGuardedLookup(blockPrivate, resolve) } : {}),
  });
  return (connectOptions, callback) => {
    const host = connectOptions.hostname.replace(/^\[(.*)\]$/, '$1');
    const range = blockPrivate && isIP(host) ? blockedRange(host) : null;
    if (range) {
      callback(new BlockedAddressError(host, range), null);
      return;
    }
    connect(connectOptions, callback);
  };
}
