import { connect } from 'node:net';
import { ALL_SCOPES, type InjectResponse, startListeningTestApp } from '../support/test-app.js';
import { startedBeforeAll } from '../support/started-before-all.js';
import { createEndpoint, createProject, importedCheck } from '../support/monitoring-fixtures.js';

/** Every error is a problem document that names its request. */
function expectProblem(response: InjectResponse, status: number, code?: string): Record<string, any> {
  expect(response.statusCode).toBe(status);
  expect(String(response.headers['content-type'])).toContain('application/problem+json');
  const body = response.json();
  expect(body).toMatchObject({ type: 'about:blank', status, request_id: response.headers['x-request-id'] });
  expect(String(body.request_id)).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
  if (code) expect(body.code).toBe(code);
  return body;
}

function nested(depth: number, leaf = '1'): string {
  return '['.repeat(depth) + leaf + ']'.repeat(depth);
}

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection after this answer. */
  closed: boolean;
}

/** Writes raw bytes to the server and reads the first answer (a real socket, not inject). */
export function rawRequest(port: number, bytes: string | Buffer, options: { endAfterWrite?: boolean } = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    let closed = false;
    const finish = () => {
      const text = received.toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return reject(new Error(`no answer: ${JSON.stringify(text.slice(0, 200))}`));
      const [statusLine, ...headerLines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      let body = text.slice(split + 4);
      if (headers['transfer-encoding'] === 'chunked') {
        let out = '';
        let rest = body;
        for (;;) {
          const eol = rest.indexOf('\r\n');
          const size = parseInt(rest.slice(0, eol), 16);
          if (!size) break;
          out += rest.slice(eol + 2, eol + 2 + size);
          rest = rest.slice(eol + 2 + size + 2);
        }
        body = out;
      } else if (headers['content-length']) {
        body = body.slice(0, Number(headers['content-length']));
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body, closed });
    };
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
    });
    socket.on('end', () => {
      closed = true;
      finish();
      socket.destroy();
    });
    socket.on('error', () => {
      closed = true;
      finish();
    });
    socket.setTimeout(5000, () => {
      socket.destroy();
      finish();
    });
    socket.write(bytes);
    if (options.endAfterWrite) socket.end();
  });
}

function expectRawProblem(answer: RawAnswer, status: number, code?: string): Record<string, any> {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toContain('application/problem+json');
  expect(answer.headers['x-request-id']).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
  const body = JSON.parse(answer.body);
  expect(body).toMatchObject({ type: 'about:blank', status, request_id: answer.headers['x-request-id'] });
  if (code) expect(body.code).toBe(code);
  return body;
}

describe('hostile input never hurts (issue 19)', () => {
  const t = startedBeforeAll(() => startListeningTestApp(), (app) => app.close());

  async function teamWithIncident() {
    const team = await t.createTeam('Hostile');
    const { token } = await t.issueToken(team.id, ALL_SCOPES);
    const project = await createProject(t, team.id);
    const endpoint = await createEndpoint(t, team.id, project.id);
    const incident = await t.request('POST', '/api/public/v2/incidents', { token, body: { project_id: project.id, title: 'x' } });
    expect(incident.statusCode).toBe(201);
    return { teamId: team.id, token, projectId: project.id, endpointId: endpoint.id, incidentId: incident.json().data.id as number };
  }

  describe('1. never 500 on bad input', () => {
    it('refuses JSON nested deeper than the bound with 400 json_too_deep, with or without an Idempotency-Key', async () => {
      const f = await teamWithIncident();
      const url = `/api/public/v2/incidents/${f.incidentId}/comments`;
      const deep = `{"body":${nested(10_000)}}`;
      const keyed = await t.request('POST', url, { token: f.token, body: deep, headers: { 'idempotency-key': 'k-deep' } });
      expectProblem(keyed, 400, 'json_too_deep');
      const plain = await t.request('POST', url, { token: f.token, body: deep });
      expectProblem(plain, 400, 'json_too_deep');
      const metadata = `{"project_id":${f.projectId},"title":"x","metadata":{"a":${nested(10_000)}}}`;
      expectProblem(await t.request('POST', '/api/public/v2/incidents', { token: f.token, body: metadata }), 400, 'json_too_deep');
      // Deep objects too, and depth counted outside strings only.
      const objects = '{"a":'.repeat(5000) + '1' + '}'.repeat(5000);
      expectProblem(await t.request('POST', url, { token: f.token, body: objects }), 400, 'json_too_deep');
      const bracketsInText = await t.request('POST', url, { token: f.token, body: { body: '['.repeat(5000) } });
      expect(bracketsInText.statusCode).toBe(201);
    });

    it('accepts reasonably nested metadata', async () => {
      const f = await teamWithIncident();
      let metadata: Record<string, unknown> = { leaf: true };
      for (let i = 0; i < 30; i++) metadata = { level: metadata };
      const response = await t.request('POST', '/api/public/v2/incidents', { token: f.token, body: { project_id: f.projectId, title: 'x', metadata }, headers: { 'idempotency-key': 'nested-ok' } });
      expect(response.statusCode).toBe(201);
    });

    it('answers a constructor.prototype value with 400, not 500', async () => {
      const team = await t.createTeam();
      const response = await t.admin('POST', `/api/v2/teams/${team.id}/projects`, { name: 'x', description: { constructor: { prototype: {} } } });
      expectProblem(response, 400);
      const protoAdmin = await t.admin('POST', `/api/v2/teams/${team.id}/projects`, '{"name":"x","__proto__":{"admin":true}}');
      expectProblem(protoAdmin, 400);
    });

    it('answers a "constructor" key anywhere in a DTO body with 400 naming it, not 500', async () => {
      const team = await t.createTeam();
      const project = await createProject(t, team.id);
      const cases: Array<[string, unknown, string]> = [
        [`/api/v2/teams/${team.id}/projects`, { name: 'x', description: { constructor: 1 } }, 'description.constructor'],
        [`/api/v2/teams/${team.id}/projects`, { name: 'x', description: { constructor: { a: 1 } } }, 'description.constructor'],
        [`/api/v2/teams/${team.id}/endpoints`, { project_id: project.id, name: 'e', url: 'https://example.com/', headers: { constructor: 'x' } }, 'headers.constructor'],
      ];
      for (const [url, body, field] of cases) {
        const problem = expectProblem(await t.admin('POST', url, body), 400, 'validation_failed');
        expect(problem.errors).toContainEqual(expect.objectContaining({ field, code: 'invalid_value' }));
      }
      const endpoint = await createEndpoint(t, team.id, project.id);
      const imported = await t.admin('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/checks/import`, { checks: [importedCheck('2026-01-01T00:00:00Z'), { ...importedCheck('2026-01-01T00:01:00Z'), failure_reason: { constructor: 1 } }] });
      expect(expectProblem(imported, 400, 'validation_failed').errors).toEqual([expect.objectContaining({ field: 'checks[1].failure_reason.constructor', code: 'invalid_value' })]);
    });

    it('answers a check import whose items are arrays with 400, not 500', async () => {
      const team = await t.createTeam();
      const project = await createProject(t, team.id);
      const endpoint = await createEndpoint(t, team.id, project.id);
      const response = await t.admin('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/checks/import`, {
        checks: [[importedCheck('2026-01-01T00:00:00Z')], 'x', null, 7],
      });
      const body = expectProblem(response, 400, 'validation_failed');
      expect(body.errors.map((e: any) => `${e.field}:${e.code}`)).toEqual(['checks[0]:invalid_type', 'checks[1]:invalid_type', 'checks[2]:invalid_type', 'checks[3]:invalid_type']);
    });
  });

  describe('2. the framework\'s own errors are problem documents', () => {
    it('a malformed percent-encoding in the path: 400 problem without echoing the URL', async () => {
      const response = await t.request('GET', '/api/public/v2/projects/%ff');
      const body = expectProblem(response, 400, 'invalid_url');
      expect(JSON.stringify(body)).not.toContain('%ff');
    });

    it('a path parameter over the length bound: 404 problem like any unknown id', async () => {
      const f = await teamWithIncident();
      const response = await t.request('GET', `/api/public/v2/incidents/${'1'.repeat(150)}`, { token: f.token });
      expectProblem(response, 404, 'not_found');
    });

    it('an unknown method, raw UTF-8 in the path, an oversized request line: problem, Connection: close', async () => {
      const unknownMethod = await rawRequest(t.port, 'FROB /health/live HTTP/1.1\r\nHost: x\r\n\r\n');
      expectRawProblem(unknownMethod, 400, 'bad_request');
      expect(unknownMethod.headers.connection).toBe('close');
      expect(unknownMethod.closed).toBe(true);

      const utf8 = await rawRequest(t.port, Buffer.concat([Buffer.from('GET /api/public/v2/projects/'), Buffer.from('é✓', 'utf8'), Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n')]));
      expect(utf8.status).toBeLessThan(500);
      expectRawProblem(utf8, utf8.status);
      if (utf8.closed) expect(utf8.headers.connection).toBe('close');

      const huge = await rawRequest(t.port, `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n${'X-Fill: '.concat('b'.repeat(8000), '\r\n').repeat(3)}\r\n`);
      expectRawProblem(huge, 431, 'request_header_fields_too_large');
      expect(huge.headers.connection).toBe('close');
      expect(huge.closed).toBe(true);
    });
  });

  describe('found by the fuzz test', () => {
    it('an empty path parameter with an Idempotency-Key answers 404 (and replays it), not 409 in progress', async () => {
      const send = () => t.admin('POST', '/api/v2/teams//projects', { name: 'x' });
      const keyed = () => t.request('POST', '/api/v2/teams//projects', { token: 'test-admin-token-0123456789', body: { name: 'x' }, headers: { 'idempotency-key': 'empty-param' } });
      expectProblem(await send(), 404, 'not_found');
      expectProblem(await keyed(), 404, 'not_found');
      const replay = await keyed();
      expect(replay.statusCode).toBe(404);
      expect(replay.headers['idempotent-replayed']).toBe('true');
    });
  });

  describe('3. errors are bounded', () => {
    it('150,000 bad endpoint_ids answer a small error with a count of the rest', async () => {
      const f = await teamWithIncident();
      const ids = Array.from({ length: 150_000 }, () => 0);
      const response = await t.request('POST', '/api/public/v2/incidents', { token: f.token, body: { project_id: f.projectId, title: 'x', endpoint_ids: ids } });
      const body = expectProblem(response, 400, 'validation_failed');
      expect(response.body.length).toBeLessThan(16 * 1024);
      expect(body.errors).toContainEqual(expect.objectContaining({ field: 'endpoint_ids', code: 'too_many' }));
    });

    it('a body of 50,000 unknown fields lists a bounded number of errors and counts the others', async () => {
      const team = await t.createTeam();
      const body = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`f${i}`, 1]));
      const response = await t.admin('POST', `/api/v2/teams/${team.id}/projects`, { name: 'x', ...body });
      const problem = expectProblem(response, 400, 'validation_failed');
      expect(problem.errors.length).toBeLessThanOrEqual(50);
      expect(problem.errors_omitted).toBe(50_000 - problem.errors.length);
      expect(response.body.length).toBeLessThan(16 * 1024);
    });
  });

  describe('4. large inputs are refused by shape and count first', () => {
    it('a 2 MiB import of a million numbers answers a small 400 (checks: too_many)', async () => {
      const team = await t.createTeam();
      const project = await createProject(t, team.id);
      const endpoint = await createEndpoint(t, team.id, project.id);
      const body = `{"checks":[${'1,'.repeat(1024 * 1024 - 1)}1]}`;
      const response = await t.admin('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/checks/import`, body);
      const problem = expectProblem(response, 400, 'validation_failed');
      expect(problem.errors).toEqual([expect.objectContaining({ field: 'checks', code: 'too_many' })]);
      expect(response.body.length).toBeLessThan(4096);
    });
  });

  describe('5. body limits hold while streaming', () => {
    async function chunked(path: string, totalBytes: number): Promise<{ answer: RawAnswer; sent: number }> {
      return new Promise((resolve, reject) => {
        const socket = connect(t.port, '127.0.0.1');
        let sent = 0;
        let received = '';
        let stopped = false;
        socket.on('data', (chunk) => {
          received += chunk.toString('latin1');
          stopped = true;
        });
        const done = () => {
          const [head, body] = received.split('\r\n\r\n');
          if (!head) return reject(new Error('no answer'));
          const lines = head.split('\r\n');
          const headers = Object.fromEntries(lines.slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
          resolve({ answer: { status: Number(lines[0].split(' ')[1]), headers, body: body ?? '', closed: true }, sent });
        };
        socket.on('close', done);
        socket.on('error', () => undefined);
        socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer test-admin-token-0123456789\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
        const piece = Buffer.alloc(64 * 1024, 0x20);
        const pump = () => {
          while (!stopped && sent < totalBytes && !socket.destroyed) {
            sent += piece.length;
            if (!socket.write(Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]))) return socket.once('drain', pump);
          }
          if (!stopped && !socket.destroyed) socket.end('0\r\n\r\n');
        };
        pump();
      });
    }

    it('refuses a chunked body at the route limit, not after reading the whole stream', async () => {
      const team = await t.createTeam();
      const { answer, sent } = await chunked(`/api/v2/teams/${team.id}/projects`, 50 * 1024 * 1024);
      expect(answer.status).toBe(413);
      expect(answer.headers['content-type']).toContain('application/problem+json');
      expect(JSON.parse(answer.body.split('\r\n').find((l) => l.startsWith('{')) ?? answer.body).code).toBe('payload_too_large');
      // Socket buffers let some more through before the answer arrives, but far less than the stream.
      expect(sent).toBeLessThan(8 * 1024 * 1024);
    });
  });

  describe('6. replays keep no secrets', () => {
    it('a replayed token issuance answers the metadata without the token, and nothing stores it', async () => {
      const team = await t.createTeam();
      const issue = () => t.request('POST', `/api/v2/teams/${team.id}/tokens`, {
        token: 'test-admin-token-0123456789',
        body: { name: 'ci', scopes: ['monitoring:read'], role: 'viewer' },
        headers: { 'idempotency-key': 'token-once' },
      });
      const first = await issue();
      expect(first.statusCode).toBe(201);
      const secret = first.json().data.token as string;
      expect(secret).toMatch(/^mon_pat_/);
      const replay = await issue();
      expect(replay.statusCode).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      const replayed = replay.json().data;
      expect(replayed.token).toBeNull();
      expect(replayed).toMatchObject({ id: first.json().data.id, name: 'ci', scopes: ['monitoring:read'], role: 'viewer' });
      expect(replay.body).not.toContain(secret);
      const stored = await t.platform.coordination.claimIdempotency('admin:token-once', 'probe', { retentionMs: 1000, staleAfterMs: 1000 });
      expect(JSON.stringify(stored)).not.toContain(secret);
    });
  });

  describe('8. imported checks take only real dates', () => {
    it.each(['2026-02-30T00:00:00Z', '2026-13-01T00:00:00Z', '2026-01-01T24:00:00Z', '2026-04-31T10:00:00+02:00', '2025-02-29T00:00:00Z'])('refuses %s', async (date) => {
      const team = await t.createTeam();
      const project = await createProject(t, team.id);
      const endpoint = await createEndpoint(t, team.id, project.id);
      const response = await t.admin('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/checks/import`, { checks: [importedCheck(date)] });
      const body = expectProblem(response, 400, 'validation_failed');
      expect(body.errors).toEqual([expect.objectContaining({ field: 'checks[0].checked_at', code: 'invalid_value' })]);
    });
  });
});
