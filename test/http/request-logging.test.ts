import { pino } from 'pino';
import { startedBeforeAll } from '../support/started-before-all.js';
import { ADMIN_TOKEN, startTestApp } from '../support/test-app.js';

describe('request logging', () => {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const t = startedBeforeAll(() => startTestApp({ LOG_LEVEL: 'debug' }, { logger }), (started) => started.close());

  it('logs one line per request, tagged with its request id (health probes at debug)', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/health/live', headers: { 'x-request-id': 'log-test-1' } });
    expect(response.statusCode).toBe(200);
    const tagged = lines.filter((line) => line.request_id === 'log-test-1');
    expect(tagged).toEqual([expect.objectContaining({ msg: 'request', level: 20, method: 'GET', route: '/health/live', status: 200, duration_ms: expect.any(Number) })]);
  });

  it('logs a metrics scrape at debug, so a scraper does not fill the info log', async () => {
    await t.app.inject({ method: 'GET', url: '/metrics', headers: { 'x-request-id': 'log-test-3' } });
    const tagged = lines.filter((line) => line.request_id === 'log-test-3');
    expect(tagged).toEqual([expect.objectContaining({ msg: 'request', level: 20, route: '/metrics' })]);
  });

  it('logs an API request at info with its route template and no token', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v2/teams/77/tokens',
      headers: { 'x-request-id': 'log-test-2', authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      payload: { name: 'x', scopes: ['monitoring:read'], role: 'viewer' },
    });
    expect(response.statusCode).toBe(404); // no team 77: the route matched, the handler refused
    const tagged = lines.filter((line) => line.request_id === 'log-test-2');
    expect(tagged).toEqual([expect.objectContaining({ msg: 'request', level: 30, method: 'POST', status: response.statusCode, admin: true, team_id: 77 })]);
    expect(String(tagged[0].route)).toMatch(/^\/api\/v2\/teams\/:\w+\/tokens$/);
    expect(JSON.stringify(lines)).not.toContain(ADMIN_TOKEN);
  });
});
