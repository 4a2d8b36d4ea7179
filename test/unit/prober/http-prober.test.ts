import {
  DEFAULT_LATENCY_SETTINGS,
  type EndpointConfiguration,
} from '../../../src/monitoring/domain/endpoint-configuration.js';
import { createHttpProber, type HttpProber } from '../../../src/probing/prober/http-prober.js';
import { closedPort, startServer, type Handler, type LocalServer } from './local-server.js';

function endpoint(url: string, overrides: Partial<EndpointConfiguration> = {}): EndpointConfiguration {
  return {
    ...DEFAULT_LATENCY_SETTINGS,
    url,
    method: 'GET',
    headers: {},
    request_payload: null,
    expected_status: 200,
    body_match_mode: 'none',
    expected_body: null,
    interval_seconds: 60,
    timeout_seconds: 5,
    ...overrides,
  };
}

const reply =
  (status: number, body = '', headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(status, headers);
    res.end(body);
  };

describe('HTTP prober against local servers', () => {
  let prober: HttpProber;
  let server: LocalServer | undefined;

  beforeEach(() => {
    prober = createHttpProber({ blockPrivate: false });
  });

  afterEach(async () => {
    await prober.close();
    await server?.close();
    server = undefined;
  });

  async function serve(handler: Handler): Promise<LocalServer> {
    server = await startServer(handler);
    return server;
  }

  describe('judging a response', () => {
    it('reports a successful check with integer timings and an internal excerpt', async () => {
      const { origin } = await serve(reply(200, 'all good'));
      const before = Date.now();

      const outcome = await prober.probe(endpoint(`${origin}/health`));

      expect(outcome).toMatchObject({
        success: true,
        status_code: 200,
        body_complete: true,
        failure_reason: null,
        response_excerpt: 'all good',
      });
      expect(outcome.checked_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(Date.parse(outcome.checked_at)).toBeGreaterThanOrEqual(before - 1);
      for (const field of ['latency_ms', 'time_to_first_byte_ms', 'duration_ms'] as const) {
        expect(Number.isInteger(outcome[field])).toBe(true);
      }
      expect(outcome.time_to_first_byte_ms).toBeLessThanOrEqual(outcome.latency_ms);
      expect(outcome.latency_ms).toBeLessThanOrEqual(outcome.duration_ms);
    });

    it('fails on an unexpected status and names both codes', async () => {
      const { origin } = await serve(reply(503, 'down'));

      const outcome = await prober.probe(endpoint(origin));

      expect(outcome).toMatchObject({
        success: false,
        status_code: 503,
        failure_reason: 'status: expected 200, got 503',
        response_excerpt: 'down',
      });
    });

    it.each([
      // 'abc' then the first byte of the 3-byte '€': the cut character is left out, not replaced.
      ['a character cut at the excerpt\'s end', Buffer.from('abc€def'), 'abc'],
      ['ASCII', Buffer.from('abcdef'), 'abcd'],
      ['an invalid byte inside', Buffer.from([0x61, 0xff, 0x62, 0x63]), 'a\uFFFDbc'],
      ['a stray continuation byte at the end', Buffer.from([0x61, 0x62, 0x63, 0x80]), 'abc\uFFFD'],
      ['two excerpts in a row share nothing', Buffer.from('€€'), '€'],
    ])('keeps the excerpt whole UTF-8: %s', async (_name, body, expected) => {
      const { origin } = await serve((_req, res) => {
        res.writeHead(200);
        res.end(body);
      });
      const small = createHttpProber({ blockPrivate: false, successExcerptBytes: 4 });
      try {
        expect((await small.probe(endpoint(origin))).response_excerpt).toBe(expected);
        expect((await small.probe(endpoint(origin))).response_excerpt).toBe(expected);
      } finally {
        await small.close();
      }
    });

    it('succeeds when a non-200 status is the expected one', async () => {
      const { origin } = await serve(reply(204));

      const outcome = await prober.probe(endpoint(origin, { expected_status: 204 }));

      expect(outcome).toMatchObject({ success: true, status_code: 204, response_excerpt: null });
    });

    it.each([
      ['exact', 'pong', 'pong', true],
      ['exact', 'pong', 'pong!', false],
      ['contains', 'healthy', 'status: healthy', true],
      ['contains', 'healthy', 'status: degraded', false],
      ['json_subset', '{"status":"up","db":{"ok":true}}', '{"status":"up","db":{"ok":true,"ms":3},"v":2}', true],
      ['json_subset', '{"status":"up"}', '{"status":"down"}', false],
      ['json_subset', '{"status":"up"}', 'not json', false],
    ] as const)('body mode %s expecting %j against %j: success %s', async (mode, expected, body, success) => {
      const { origin } = await serve(reply(200, body));

      const outcome = await prober.probe(endpoint(origin, { body_match_mode: mode, expected_body: expected }));

      expect(outcome.success).toBe(success);
      if (success) expect(outcome.failure_reason).toBeNull();
      else expect(outcome.failure_reason).toMatch(/^body: /);
    });

    it('checks the status before the body', async () => {
      const { origin } = await serve(reply(500, 'pong'));

      const outcome = await prober.probe(endpoint(origin, { body_match_mode: 'exact', expected_body: 'pong' }));

      expect(outcome.failure_reason).toBe('status: expected 200, got 500');
    });

    it('does not follow redirects: a 3xx is judged like any status', async () => {
      const { origin, requests } = await serve(reply(302, '', { location: '/elsewhere' }));

      const judgedAsFailure = await prober.probe(endpoint(`${origin}/start`));
      const judgedAsExpected = await prober.probe(endpoint(`${origin}/start`, { expected_status: 302 }));

      expect(judgedAsFailure).toMatchObject({ success: false, failure_reason: 'status: expected 200, got 302' });
      expect(judgedAsExpected.success).toBe(true);
      expect(requests.map((r) => r.url)).toEqual(['/start', '/start']);
    });
  });

  describe('building the request', () => {
    it('sends configured headers, the payload and URL user-info as Basic auth', async () => {
      const { port, requests } = await serve(reply(200));

      await prober.probe(
        endpoint(`http://monitor:s%40cret@127.0.0.1:${port}/api`, {
          headers: { 'X-Api-Key': 'hidden-key', Accept: 'application/json' },
          request_payload: '{"ping":true}',
        }),
      );

      const [received] = requests;
      expect(received.url).toBe('/api');
      expect(received.headers['x-api-key']).toBe('hidden-key');
      expect(received.headers.accept).toBe('application/json');
      expect(received.headers.authorization).toBe(`Basic ${Buffer.from('monitor:s@cret').toString('base64')}`);
      expect(received.headers.host).toBe(`127.0.0.1:${port}`);
      expect(received.body).toBe('{"ping":true}');
    });

    it('sends the same request every time a configuration is probed again, and a changed configuration as changed', async () => {
      const { port, requests } = await serve(reply(200));
      const config = endpoint(`http://monitor:pw@127.0.0.1:${port}/api?x=1`, { headers: { 'X-Api-Key': 'k' }, request_payload: 'p' });

      await prober.probe(config);
      await prober.probe(config);
      await prober.probe({ ...config, url: `http://127.0.0.1:${port}/other`, headers: {} });

      const seen = requests.map((r) => ({ url: r.url, method: r.method, key: r.headers['x-api-key'], auth: r.headers.authorization, body: r.body }));
      const first = { url: '/api?x=1', method: 'GET', key: 'k', auth: `Basic ${Buffer.from('monitor:pw').toString('base64')}`, body: 'p' };
      expect(seen).toEqual([first, first, { url: '/other', method: 'GET', key: undefined, auth: undefined, body: 'p' }]);
    });

    it('sends a malformed percent-escape in user-info as written instead of failing', async () => {
      const { port, requests } = await serve(reply(200));

      const outcome = await prober.probe(endpoint(`http://user:%E0x@127.0.0.1:${port}/`));

      expect(outcome.success).toBe(true);
      expect(requests[0].headers.authorization).toBe(`Basic ${Buffer.from('user:%E0x').toString('base64')}`);
    });

    it('lets an explicitly configured Authorization header win over user-info', async () => {
      const { port, requests } = await serve(reply(200));

      await prober.probe(
        endpoint(`http://user:pass@127.0.0.1:${port}/`, { headers: { Authorization: 'Bearer configured' } }),
      );

      expect(requests[0].headers.authorization).toBe('Bearer configured');
    });

    it('sends the hidden query string', async () => {
      const { origin, requests } = await serve(reply(200));

      await prober.probe(endpoint(`${origin}/status?token=abc&region=eu`));

      expect(requests[0].url).toBe('/status?token=abc&region=eu');
    });

    it.each(['HEAD', 'OPTIONS'] as const)('probes with %s', async (method) => {
      const { origin, requests } = await serve(reply(200, method === 'HEAD' ? '' : 'opts'));

      const outcome = await prober.probe(endpoint(origin, { method }));

      expect(requests[0].method).toBe(method);
      expect(outcome).toMatchObject({ success: true, status_code: 200, body_complete: true });
    });

    it('reuses kept-alive connections for repeated probes of an origin', async () => {
      const local = await serve(reply(200, 'ok'));

      for (let i = 0; i < 6; i += 1) await prober.probe(endpoint(local.origin));

      expect(local.requests).toHaveLength(6);
      // undici's pool may open a second socket while the first is still settling; never one per probe.
      expect(local.connections).toBeLessThanOrEqual(2);
    });
  });

  describe('limits', () => {
    it('times out a server that never answers, with no status', async () => {
      const { origin } = await serve(() => undefined);

      const outcome = await prober.probe(endpoint(origin, { timeout_seconds: 1 }));

      expect(outcome).toMatchObject({
        success: false,
        status_code: 0,
        body_complete: false,
        failure_reason: 'timeout: no response within 1 s',
        response_excerpt: null,
      });
    });

    it('times out a body that never finishes, keeping the status and what arrived', async () => {
      const { origin } = await serve((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial');
      });

      const outcome = await prober.probe(endpoint(origin, { timeout_seconds: 1 }));

      expect(outcome).toMatchObject({
        success: false,
        status_code: 200,
        body_complete: false,
        failure_reason: 'timeout: body not complete within 1 s',
        response_excerpt: 'partial',
      });
    });

    it('keeps 16 bytes of a successful page as its excerpt and 512 of a failing one', async () => {
      const page = `<!doctype html><html><body>${'<p>All systems operational.</p>'.repeat(64)}</body></html>`;
      let status = 200;
      const { origin } = await serve((_request, response) => {
        response.writeHead(status, { 'content-type': 'text/html' }).end(page);
      });
      const up = await prober.probe(endpoint(origin));
      status = 503;
      const down = await prober.probe(endpoint(origin));

      expect(up).toMatchObject({ success: true, response_excerpt: page.slice(0, 16) });
      expect(down).toMatchObject({ success: false, failure_reason: 'status: expected 200, got 503', response_excerpt: page.slice(0, 512) });
    });

    it('reads at most maxBodyBytes and reports the body as incomplete', async () => {
      const small = createHttpProber({ blockPrivate: false, maxBodyBytes: 1024, excerptBytes: 16 });
      const { origin } = await serve(reply(200, 'a'.repeat(4096) + 'needle'));
      try {
        const plain = await small.probe(endpoint(origin));
        const searching = await small.probe(endpoint(origin, { body_match_mode: 'contains', expected_body: 'needle' }));

        expect(plain).toMatchObject({ success: true, body_complete: false, response_excerpt: 'a'.repeat(16) });
        expect(searching).toMatchObject({ success: false, body_complete: false });
        expect(searching.failure_reason).toBe('body: does not contain the expected text (body cut at 1024 bytes)');
      } finally {
        await small.close();
      }
    });
  });

  describe('transport failures', () => {
    it('reports a refused connection with no status', async () => {
      const port = await closedPort();

      const outcome = await prober.probe(endpoint(`http://127.0.0.1:${port}/`));

      expect(outcome).toMatchObject({ success: false, status_code: 0, body_complete: false });
      expect(outcome.failure_reason).toBe(`refused: 127.0.0.1:${port} refused the connection`);
    });

    it('reports an unresolvable host as a DNS failure', async () => {
      const outcome = await prober.probe(endpoint('http://nonexistent.invalid/'));

      expect(outcome).toMatchObject({ success: false, status_code: 0 });
      expect(outcome.failure_reason).toMatch(/^dns: nonexistent\.invalid could not be resolved/);
    });

    it('reports a TLS handshake failure (https spoken to a plain HTTP server)', async () => {
      const { port } = await serve(reply(200));

      const outcome = await prober.probe(endpoint(`https://127.0.0.1:${port}/`));

      expect(outcome).toMatchObject({ success: false, status_code: 0 });
      expect(outcome.failure_reason).toMatch(/^tls: /);
    });

    it('fails without sending when a configured header cannot be sent', async () => {
      const { origin, requests } = await serve(reply(200));

      const outcome = await prober.probe(endpoint(origin, { headers: { 'X-A': 'v\r\nInjected: 1' } }));

      expect(outcome).toMatchObject({ success: false, status_code: 0 });
      expect(outcome.failure_reason).toBe('network: request not sent (invalid header, method or payload)');
      expect(requests).toHaveLength(0);
    });

    it('never puts user-info, query or header values in the failure reason', async () => {
      const port = await closedPort();

      const outcome = await prober.probe(
        endpoint(`http://user:pw-secret@127.0.0.1:${port}/p?key=q-secret`, { headers: { 'X-K': 'h-secret' } }),
      );

      expect(outcome.failure_reason).toMatch(/^refused: /);
      expect(outcome.failure_reason).not.toMatch(/secret|user/);
    });
  });

  describe('address guard', () => {
    it.each(['127.0.0.1', 'localhost'])('refuses %s when private addresses are blocked', async (host) => {
      const { port, requests } = await serve(reply(200));
      const guarded = createHttpProber({ blockPrivate: true });
      try {
        const outcome = await guarded.probe(endpoint(`http://${host}:${port}/`));

        expect(outcome).toMatchObject({ success: false, status_code: 0 });
        expect(outcome.failure_reason).toBe(`blocked: ${host} resolves to a non-public address (loopback)`);
        expect(requests).toHaveLength(0);
      } finally {
        await guarded.close();
      }
    });

    it('allows localhost when blocking is off', async () => {
      const { port } = await serve(reply(200));

      const outcome = await prober.probe(endpoint(`http://localhost:${port}/`));

      expect(outcome.success).toBe(true);
    });

    it('connects to the address its one resolution returned', async () => {
      const { port, requests } = await serve(reply(200));
      const answers = ['127.0.0.1'];
      const resolving = createHttpProber({
        blockPrivate: false,
        // A second resolution would fail the probe; nothing off this machine is ever contacted.
        resolve: async (host) => {
          const address = answers.shift();
          if (!address) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
          return [{ address, family: 4 }];
        },
      });
      try {
        const outcome = await resolving.probe(endpoint(`http://service.test:${port}/`));

        expect(outcome.success).toBe(true);
        expect(requests[0].headers.host).toBe(`service.test:${port}`);
      } finally {
        await resolving.close();
      }
    });
  });

  describe('fetchVerification', () => {
    const token = 'a'.repeat(64);

    it('passes when the page answers 2xx with the token (surrounding whitespace ignored)', async () => {
      const { origin, requests } = await serve(reply(200, `\n${token}\n`));

      await expect(prober.fetchVerification(`${origin}/.well-known/monitor-verification/7`, token)).resolves.toEqual({
        ok: true,
      });
      expect(requests[0]).toMatchObject({ method: 'GET', url: '/.well-known/monitor-verification/7' });
    });

    it('fails on a different token without revealing either token', async () => {
      const { origin } = await serve(reply(200, 'b'.repeat(64)));

      const result = await prober.fetchVerification(`${origin}/v`, token);

      expect(result).toEqual({ ok: false, reason: 'body: token mismatch' });
    });

    it('fails on a non-2xx answer even when the body holds the token', async () => {
      const { origin } = await serve(reply(404, token));

      await expect(prober.fetchVerification(`${origin}/v`, token)).resolves.toEqual({
        ok: false,
        reason: 'status: expected 2xx, got 404',
      });
    });

    it('does not follow a redirect to the token', async () => {
      const { origin } = await serve((req, res) => {
        if (req.url === '/v') res.writeHead(301, { location: '/token' }).end();
        else res.writeHead(200).end(token);
      });

      await expect(prober.fetchVerification(`${origin}/v`, token)).resolves.toEqual({
        ok: false,
        reason: 'status: expected 2xx, got 301',
      });
    });

    it('applies the address guard', async () => {
      const { origin, requests } = await serve(reply(200, token));
      const guarded = createHttpProber({ blockPrivate: true });
      try {
        const result = await guarded.fetchVerification(`${origin}/v`, token);

        expect(result).toEqual({ ok: false, reason: 'blocked: 127.0.0.1 resolves to a non-public address (loopback)' });
        expect(requests).toHaveLength(0);
      } finally {
        await guarded.close();
      }
    });

    it('reports DNS failures', async () => {
      const result = await prober.fetchVerification('http://nonexistent.invalid/v', token);

      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.reason).toMatch(/^dns: /);
    });
  });
});
