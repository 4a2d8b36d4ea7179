import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: any;
}

/** A local HTTP receiver (webhook, chat or PagerDuty stand-in) that records every POST. */
export interface Receiver {
  url: string;
  received: Received[];
  /** Statuses to answer next, in order; then `status`. */
  queue: number[];
  status: number;
  /** Holds each answer this long. */
  delayMs: number;
  of(type: string): Received[];
  close(): Promise<void>;
}

export async function startReceiver(status = 200): Promise<Receiver> {
  const receiver = { received: [] as Received[], queue: [] as number[], status, delayMs: 0 } as Receiver;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown = null;
      try {
        json = JSON.parse(body);
      } catch {
        json = null;
      }
      receiver.received.push({ path: request.url ?? '/', headers: request.headers, body, json });
      const answer = receiver.queue.length > 0 ? receiver.queue.shift()! : receiver.status;
      const timer = setTimeout(() => response.writeHead(answer, { 'content-type': 'text/plain' }).end('ok'), receiver.delayMs);
      response.once('close', () => clearTimeout(timer));
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.of = (type) => receiver.received.filter((r) => r.json?.type === type);
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

/** A received delivery's Standard Webhooks headers, as `Webhook.verify` (standardwebhooks) takes them. */
export function signatureHeaders(received: { headers: IncomingHttpHeaders | Record<string, unknown> }): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const header = (name: string) => String((received.headers as Record<string, unknown>)[name]);
  return { 'webhook-id': header('webhook-id'), 'webhook-timestamp': header('webhook-timestamp'), 'webhook-signature': header('webhook-signature') };
}
