#!/usr/bin/env node
/**
 * The monitored target of the end-to-end script (.ci/e2e.mjs): an HTTP server whose answer the
 * script switches between healthy and failing, and which serves the endpoints' verification
 * tokens (/.well-known/monitor-verification/<id>) so the service can verify the destination.
 *
 *   node .ci/e2e-target.mjs [port]        # standalone (the compose file's `target` service)
 *
 * Control (JSON body): POST /__control {"status": 503} or {"tokens": {"<endpointId>": "<token>"}}.
 * Plain Node, no dependencies: it runs in a stock node image and from a checkout.
 */
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';

export async function startTarget({ port = 0, host = '127.0.0.1' } = {}) {
  const state = { status: 200, tokens: new Map(), hits: 0 };
  const server = createServer((request, response) => {
    const url = request.url ?? '/';
    if (request.method === 'POST' && url === '/__control') {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        try {
          const change = JSON.parse(body || '{}');
          if (Number.isInteger(change.status)) state.status = change.status;
          for (const [id, token] of Object.entries(change.tokens ?? {})) state.tokens.set(String(id), String(token));
          response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: state.status, hits: state.hits }));
        } catch (error) {
          response.writeHead(400, { 'content-type': 'text/plain' }).end(String(error));
        }
      });
      return;
    }
    const verification = /^\/\.well-known\/monitor-verification\/(\d+)$/.exec(url);
    if (verification) {
      const token = state.tokens.get(verification[1]);
      response.writeHead(token ? 200 : 404, { 'content-type': 'text/plain' }).end(token ? `${token}\n` : 'unknown endpoint');
      return;
    }
    state.hits++;
    response.writeHead(state.status, { 'content-type': 'text/plain' }).end(state.status < 400 ? 'ok' : 'down');
  });
  server.keepAliveTimeout = 1000;
  await new Promise((resolve) => server.listen(port, host, resolve));
  const address = server.address();
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}`,
    state,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const target = await startTarget({ port: Number(process.argv[2] ?? 8080), host: '0.0.0.0' });
  process.stdout.write(`e2e target listening on ${target.url}\n`);
  for (const signal of ['SIGTERM', 'SIGINT']) process.once(signal, () => target.close().then(() => process.exit(0)));
}
