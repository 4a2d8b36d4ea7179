import { connect } from 'node:net';
import { ADMIN_TOKEN, startListeningTestApp } from '../support/test-app.js';
import { startedBeforeAll } from '../support/started-before-all.js';

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Splits the first HTTP answer out of the bytes read, or null while it is incomplete. */
function parseAnswer(bytes: Buffer): RawAnswer | null {
  const text = bytes.toString('latin1');
  const split = text.indexOf('\r\n\r\n');
  if (split < 0) return null;
  const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  const length = Number(headers['content-length']);
  const body = text.slice(split + 4);
  if (!Number.isInteger(length) || body.length < length) return null;
  return { status: Number(statusLine.split(' ')[1]), headers, body: body.slice(0, length) };
}

/** Sends raw bytes and reads the first answer; the error the socket met, if any, comes with it. */
function exchange(port: number, bytes: string): Promise<{ answer: RawAnswer | null; error: string | null }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    let error: string | null = null;
    socket.on('data', (chunk) => (received = Buffer.concat([received, chunk])));
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    socket.on('close', () => resolve({ answer: parseAnswer(received), error }));
    socket.setTimeout(10_000, () => socket.destroy());
    socket.end(bytes);
  });
}

/**
 * Sends a request's head, then its whole body in pieces with short pauses (a slow upload that is
 * still going when the answer comes), the way a client that does not stop for an early answer
 * does: reading what arrives meanwhile, or (`readAfterSending`) only once the body is sent.
 */
function slowUpload(port: number, head: string, piece: Buffer, pieces: number, readAfterSending = false): Promise<{ answer: RawAnswer | null; error: string | null }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    if (readAfterSending) socket.pause();
    let received = Buffer.alloc(0);
    let error: string | null = null;
    socket.on('data', (chunk) => (received = Buffer.concat([received, chunk])));
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    socket.on('close', () => resolve({ answer: parseAnswer(received), error }));
    socket.setTimeout(10_000, () => socket.destroy());
    socket.write(head);
    let sent = 0;
    const send = () => {
      if (socket.destroyed || !socket.writable) return;
      if (sent === pieces) return void socket.resume().end();
      sent += 1;
      socket.write(piece);
      setTimeout(send, 2);
    };
    send();
  });
}

function expectProblemAnswer(answer: RawAnswer | null, status: number, code: string): void {
  expect(answer).not.toBeNull();
  expect(answer!.status).toBe(status);
  expect(answer!.headers['content-type']).toContain('application/problem+json');
  const body = JSON.parse(answer!.body);
  expect(body).toMatchObject({ status, code, request_id: answer!.headers['x-request-id'] });
  expect(body.request_id).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
}

describe('answers a client can read on a real socket (issue 30 items 8 and 9)', () => {
  const t = startedBeforeAll(() => startListeningTestApp(), (app) => app.close());

  it('answers an HTTP/1.1 request without Host with a problem document naming its request id', async () => {
    const { answer } = await exchange(t.port, 'GET /api/public/v2/projects HTTP/1.1\r\nAccept: application/json\r\n\r\n');
    expectProblemAnswer(answer, 400, 'bad_request');
    expect(JSON.parse(answer!.body).detail).toMatch(/Host/);
    expect(answer!.headers.connection).toBe('close');
  });

  it('still serves an HTTP/1.0 request without Host, which needs none', async () => {
    const { answer } = await exchange(t.port, 'GET /health/live HTTP/1.0\r\n\r\n');
    expect(answer?.status).toBe(200);
  });

  it('a replayed answer carries the request id its body names', async () => {
    const team = await t.createTeam();
    const post = () =>
      fetch(`http://127.0.0.1:${t.port}/api/v2/teams/${team.id}/projects`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', 'idempotency-key': 'replay-id' },
        body: JSON.stringify({ name: '' }),
      });
    const first = await post();
    const firstBody = (await first.json()) as { request_id: string };
    expect(first.status).toBe(400);
    expect(firstBody.request_id).toBe(first.headers.get('x-request-id'));
    const replay = await post();
    const replayBody = (await replay.json()) as { request_id: string };
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replayBody).toEqual(firstBody);
    expect(replay.headers.get('x-request-id')).toBe(replayBody.request_id);
  });

  describe('a body refused with 413 while the client is still sending it', () => {
    const projects = (teamId: number) => `/api/v2/teams/${teamId}/projects`;
    const attempts = 8;

    const piece = Buffer.alloc(64 * 1024, 0x20);
    const framings = {
      'a declared Content-Length': {
        head: (path: string) => `Content-Length: ${64 * piece.length}\r\n\r\n`.replace(/^/, `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Type: application/json\r\n`),
        piece,
      },
      'chunks past the limit': {
        head: (path: string) => `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
        piece: Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]),
      },
    };

    it.each([
      ['a declared Content-Length', false],
      ['a declared Content-Length', true],
      ['chunks past the limit', false],
      ['chunks past the limit', true],
    ] as const)(`is read as a 413 every time: ${attempts} slow 4 MiB uploads with %s (reading only after sending: %s)`, async (framing, readAfterSending) => {
      const team = await t.createTeam();
      const { head, piece: sent } = framings[framing];
      for (let i = 0; i < attempts; i++) {
        const { answer, error } = await slowUpload(t.port, head(projects(team.id)), sent, 64, readAfterSending);
        expect({ attempt: i, error }).toEqual({ attempt: i, error: null });
        expectProblemAnswer(answer, 413, 'payload_too_large');
      }
    }, 60_000);
  });
});
