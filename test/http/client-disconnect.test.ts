import { connect } from 'node:net';
import { pino } from 'pino';
import { ADMIN_TOKEN, startListeningTestApp } from '../support/test-app.js';
import { startedBeforeAll } from '../support/started-before-all.js';

describe('a client that disconnects mid-request (issue 19, item 7)', () => {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const t = startedBeforeAll(() => startListeningTestApp({}, { logger }), (app) => app.close());

  it('is logged at info with its request id, not as an unhandled error', async () => {
    const team = await t.createTeam();
    const port = t.port;
    const before = lines.length;
    for (let i = 0; i < 3; i++) {
      await new Promise<void>((resolve) => {
        const socket = connect(port, '127.0.0.1', () => {
          socket.write(
            `POST /api/v2/teams/${team.id}/projects HTTP/1.1\r\nHost: x\r\nX-Request-Id: gone-${i}\r\n` +
              `Authorization: Bearer ${ADMIN_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":`,
          );
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, 50);
        });
      });
    }
    const seen = () => lines.slice(before).filter((line) => String(line.request_id ?? '').startsWith('gone-'));
    for (let wait = 0; wait < 40 && seen().filter((l) => l.level === 30).length < 3; wait++) await new Promise((r) => setTimeout(r, 50));
    const logged = lines.slice(before);
    expect(logged.filter((line) => (line.level as number) >= 50)).toEqual([]);
    const disconnects = seen().filter((line) => line.level === 30 && /client closed/.test(String(line.msg)));
    expect(disconnects.map((line) => line.request_id).sort()).toEqual(['gone-0', 'gone-1', 'gone-2']);
  });
});
