/**
 * The expiry (`notAfter`) of the certificate each https origin presented in its latest TLS
 * handshake, noted by wrapping the agent's connector: undici hands its dispatch handlers no
 * socket, but every connection passes through the connector.
 *
 * A probe reads the entry of its own origin after its exchange got a response. Connections of
 * one origin share a keep-alive pool, so this is the certificate of the origin's newest
 * connection: a request that reused an older connection (opened before the server's
 * certificate changed) reports the newer one. A failed handshake (expired, untrusted) gives no
 * response, and the probe reports no expiry: the check fails on its `tls:` reason as before.
 * A resumed TLS session presents no certificate; the origin keeps the one noted at the session's
 * full handshake (a server with a new certificate has new session keys, so a full handshake).
 */
import type { TLSSocket } from 'node:tls';
import type { buildConnector } from 'undici';
import { trimOldest } from '../../platform/lru.js';

/** Origins remembered at once; the oldest is forgotten first. */
const MAX_ORIGINS = 10_000;

export class PeerCertificates {
  private readonly expiries = new Map<string, string>();

  /** A connector that notes the certificate of every TLS connection `connect` opens. */
  observing(connect: buildConnector.connector): buildConnector.connector {
    return (options, callback) => {
      connect(options, (error, socket) => {
        if (error === null && socket !== null && options.protocol === 'https:') {
          this.note(originKey(options.hostname, options.port, options.protocol), socket as TLSSocket);
        }
        (callback as (error: Error | null, socket: unknown) => void)(error, socket);
      });
    };
  }

  /** The `notAfter` (RFC 3339) the origin's newest connection presented; null when none is known. */
  expiryOf(url: URL): string | null {
    if (url.protocol !== 'https:') return null;
    return this.expiries.get(originKey(url.hostname, url.port, url.protocol)) ?? null;
  }

  private note(key: string, socket: TLSSocket): void {
    const validTo = typeof socket.getPeerCertificate === 'function' ? socket.getPeerCertificate(false)?.valid_to : undefined;
    const expiry = validTo ? new Date(validTo) : null;
    if (expiry === null || Number.isNaN(expiry.getTime())) {
      // A resumed TLS session shows no certificate: it is the one of the session's full handshake.
      if (!socket.isSessionReused?.()) this.expiries.delete(key);
      return;
    }
    this.expiries.delete(key);
    this.expiries.set(key, expiry.toISOString());
    trimOldest(this.expiries, MAX_ORIGINS);
  }
}

function originKey(hostname: string, port: string | number, protocol: string): string {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return `${host}:${port === '' || port === undefined ? (protocol === 'https:' ? 443 : 80) : Number(port)}`;
}
