import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Echoes a well-formed client `X-Request-Id`, otherwise generates one. */
export function requestIdFor(request: IncomingMessage): string {
  const header = request.headers['x-request-id'];
  const value = Array.isArray(header) ? header[0] : header;
  return value && CLIENT_REQUEST_ID.test(value) ? value : randomUUID();
}
