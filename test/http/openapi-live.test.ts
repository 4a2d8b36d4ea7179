/**
 * The served OpenAPI documents against the live service: every public route is called, for its
 * success and for each documented error a client can provoke (400, 401, 403, 404, 413, 415, 422,
 * 429), and each answer's status, content type and body must be what the served document says.
 * A route missing from the table below fails the test, so a new route comes with its calls.
 * Not provoked here: 409 idempotency_key_in_progress (timing), 503 (a store down) and 202
 * views_behind (slow views); their schemas are the shared Problem and ViewsBehind ones.
 */
import { generateKeyPairSync } from 'node:crypto';
import { jest } from '@jest/globals';
import { startedBeforeAll } from '../support/started-before-all.js';
import { ADMIN_TOKEN, ALL_SCOPES, startTestApp, type InjectResponse, type TestApp } from '../support/test-app.js';
import { startTarget, type Target } from '../e2e/support.js';
import { conformanceTo, type Conformance } from '../support/openapi-conformance.js';
import { createEndpoint, createProject, importChecks } from '../support/monitoring-fixtures.js';

jest.setTimeout(120_000);

const V2 = '/api/public/v2';
const UNKNOWN = 99_999_999;

interface Call {
  url: string;
  body?: unknown;
}

interface World {
  t: TestApp;
  team: number;
  publicDoc: Conformance;
  adminDoc: Conformance;
  editor: string;
  viewer: string;
  analyticsOnly: string;
  monitoringOnly: string;
  project: number;
  endpoint: number;
  check: number;
  incident: () => Promise<number>;
  comment: (incident: number) => Promise<number>;
  checkpoint: (incident: number) => Promise<number>;
}

const world = startedBeforeAll<World>(
  async () => {
    // A signing key, so the audit public key route has a key to serve.
    const t = await startTestApp({ AUDIT_SIGNING_KEY: generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() });
    const team = await t.createTeam('Documented');
    const editor = (await t.issueToken(team.id, ALL_SCOPES, 'editor')).token;
    const viewer = (await t.issueToken(team.id, ALL_SCOPES, 'viewer')).token;
    const analyticsOnly = (await t.issueToken(team.id, ['analytics:read'], 'viewer')).token;
    const monitoringOnly = (await t.issueToken(team.id, ['monitoring:read'], 'viewer')).token;
    const project = (await createProject(t, team.id)).id;
    const endpoint = (await createEndpoint(t, team.id, project)).id;
    await importChecks(t, team.id, endpoint, [{ checked_at: new Date(Date.now() - 60_000).toISOString(), success: false, status_code: 500, latency_ms: 90 }]);
    const check = (await t.request('GET', `${V2}/endpoints/${endpoint}/checks`, { token: editor })).json().data[0].id;
    const write = async (url: string, body: unknown) => {
      const response = await t.request('POST', url, { token: editor, body });
      if (response.statusCode !== 201) throw new Error(`${url}: ${response.statusCode} ${response.body}`);
      return response.json().data.id as number;
    };
    const served = async (url: string) => conformanceTo((await t.request('GET', url)).json());
    return {
      t,
      team: team.id,
      publicDoc: await served(`${V2}/openapi.json`),
      adminDoc: await served('/api/v2/openapi.json'),
      editor,
      viewer,
      analyticsOnly,
      monitoringOnly,
      project,
      endpoint,
      check,
      incident: () => write(`${V2}/incidents`, { project_id: project, endpoint_ids: [endpoint], title: 'Documented' }),
      comment: (incident) => write(`${V2}/incidents/${incident}/comments`, { body: 'note' }),
      checkpoint: (incident) => write(`${V2}/incidents/${incident}/checkpoints`, { title: 'Update' }),
    };
  },
  async (w) => w.t.close(),
);

/** How to call each public operation successfully (fresh resources where the call consumes them). */
const successes: Record<string, (w: World) => Promise<Call>> = {
  [`GET ${V2}/projects`]: async () => ({ url: `${V2}/projects` }),
  [`GET ${V2}/projects/{projectID}`]: async (w) => ({ url: `${V2}/projects/${w.project}` }),
  [`GET ${V2}/projects/{projectID}/endpoints`]: async (w) => ({ url: `${V2}/projects/${w.project}/endpoints?enabled=false&limit=10` }),
  [`GET ${V2}/endpoints`]: async (w) => ({ url: `${V2}/endpoints?project_id=${w.project}` }),
  [`GET ${V2}/endpoints/{endpointID}`]: async (w) => ({ url: `${V2}/endpoints/${w.endpoint}` }),
  [`GET ${V2}/endpoints/{endpointID}/checks`]: async (w) => ({ url: `${V2}/endpoints/${w.endpoint}/checks?success=false&from=2020-01-01T00:00:00Z` }),
  [`GET ${V2}/endpoints/{endpointID}/checks/{checkID}`]: async (w) => ({ url: `${V2}/endpoints/${w.endpoint}/checks/${w.check}` }),
  [`GET ${V2}/endpoints/{endpointID}/alert-status`]: async (w) => ({ url: `${V2}/endpoints/${w.endpoint}/alert-status` }),
  [`GET ${V2}/analytics`]: async () => ({ url: `${V2}/analytics?window=24h` }),
  [`GET ${V2}/projects/{projectID}/analytics`]: async (w) => ({ url: `${V2}/projects/${w.project}/analytics` }),
  [`GET ${V2}/endpoints/{endpointID}/analytics`]: async (w) => ({ url: `${V2}/endpoints/${w.endpoint}/analytics?buckets=4` }),
  ['GET /api/public/v1/analytics']: async () => ({ url: '/api/public/v1/analytics' }),
  [`GET ${V2}/incidents`]: async (w) => {
    await w.incident();
    return { url: `${V2}/incidents?state=open&from=2020-01-01T00:00:00Z&limit=5` };
  },
  [`POST ${V2}/incidents`]: async (w) => ({ url: `${V2}/incidents`, body: { project_id: w.project, title: 'Created', severity: 'critical', metadata: { ticket: 'OPS-1' } } }),
  [`GET ${V2}/incidents/{incidentID}`]: async (w) => {
    const incident = await w.incident();
    await w.comment(incident);
    await w.checkpoint(incident);
    return { url: `${V2}/incidents/${incident}` };
  },
  [`PATCH ${V2}/incidents/{incidentID}`]: async (w) => ({ url: `${V2}/incidents/${await w.incident()}`, body: { title: 'Renamed', last_error_at: new Date(Date.now() + 60_000).toISOString() } }),
  [`GET ${V2}/incidents/{incidentID}/checks`]: async (w) => ({ url: `${V2}/incidents/${await w.incident()}/checks?limit=5` }),
  [`GET ${V2}/incident-statuses`]: async () => ({ url: `${V2}/incident-statuses` }),
  [`PATCH ${V2}/incidents/{incidentID}/status`]: async (w) => ({ url: `${V2}/incidents/${await w.incident()}/status`, body: { status: 'Identified', resolved: true } }),
  [`POST ${V2}/incidents/{incidentID}/merge`]: async (w) => ({ url: `${V2}/incidents/${await w.incident()}/merge`, body: { source_incident_ids: [await w.incident()] } }),
  [`POST ${V2}/incidents/{incidentID}/comments`]: async (w) => ({ url: `${V2}/incidents/${await w.incident()}/comments`, body: { body: 'Rolling back', pinned: true } }),
  [`PATCH ${V2}/incidents/{incidentID}/comments/{commentID}`]: async (w) => {
    const incident = await w.incident();
    return { url: `${V2}/incidents/${incident}/comments/${await w.comment(incident)}`, body: { pinned: true } };
  },
  [`DELETE ${V2}/incidents/{incidentID}/comments/{commentID}`]: async (w) => {
    const incident = await w.incident();
    return { url: `${V2}/incidents/${incident}/comments/${await w.comment(incident)}` };
  },
  [`POST ${V2}/incidents/{incidentID}/checkpoints`]: async (w) => ({ url: `${V2}/incidents/${await w.incident()}/checkpoints`, body: { title: 'Fix deployed' } }),
  [`PATCH ${V2}/incidents/{incidentID}/checkpoints/{checkpointID}`]: async (w) => {
    const incident = await w.incident();
    return { url: `${V2}/incidents/${incident}/checkpoints/${await w.checkpoint(incident)}`, body: { status_label: 'Monitoring' } };
  },
  [`GET ${V2}/slos`]: async (w) => {
    await slo(w, w.team, w.project);
    return { url: `${V2}/slos?limit=5` };
  },
  [`GET ${V2}/slos/{sloID}`]: async (w) => ({ url: `${V2}/slos/${await slo(w, w.team, w.project)}` }),
};

const methodOf = (operation: string) => operation.split(' ')[0];
/** The operation's path with every id replaced by one no team has. */
const unknownIds = (url: string, template: string) => {
  const ids = [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  let result = url;
  if (ids.length > 0) {
    const parts = url.split('?')[0].split('/');
    const templateParts = template.split('/');
    result = templateParts.map((part, i) => (part.startsWith('{') ? String(UNKNOWN) : parts[i])).join('/');
  }
  return result;
};

describe('the public OpenAPI document matches the live service', () => {
  const answers: Array<[string, number]> = [];
  const problems: string[] = [];

  async function call(operation: string, method: string, url: string, options: { token?: string | null; body?: unknown; headers?: Record<string, string> } = {}): Promise<InjectResponse> {
    const response = await world.t.request(method, url, { token: options.token === undefined ? world.editor : options.token, body: options.body, headers: options.headers });
    answers.push([operation, response.statusCode]);
    problems.push(...world.publicDoc.check(operation, response));
    return response;
  }

  it('lists every public route in the table of calls', () => {
    expect(world.publicDoc.operations().sort()).toEqual(Object.keys(successes).sort());
  });

  it('answers each route as documented: success and every error a client can provoke', async () => {
    for (const operation of world.publicDoc.operations()) {
      const make = successes[operation];
      if (!make) continue;
      const method = methodOf(operation);
      const template = operation.slice(method.length + 1);
      const success = await make(world);
      const ok = await call(operation, method, success.url, { body: success.body });
      expect([operation, ok.statusCode < 300]).toEqual([operation, true]);

      await call(operation, method, success.url, { token: null, body: success.body });
      const wrongScope = operation.includes('/analytics') || operation.includes('/slos') ? world.monitoringOnly : world.analyticsOnly;
      await call(operation, method, success.url, { token: wrongScope, body: success.body });
      if (method !== 'GET') await call(operation, method, (await make(world)).url, { token: world.viewer, body: success.body });
      if (template.includes('{')) await call(operation, method, unknownIds(success.url, template), { body: success.body });
      if (template.endsWith('/incidents') && method === 'GET') await call(operation, method, `${template}?limit=0&from=2026-02-30T00:00:00Z`);
      else if (template.includes('analytics')) await call(operation, method, `${success.url.split('?')[0]}?buckets=0`);
      else if (method === 'GET' && /\/(projects|endpoints|checks)$/.test(template)) await call(operation, method, `${success.url.split('?')[0]}?limit=101`);
      if (world.publicDoc.hasBody(operation)) {
        const fresh = await make(world);
        await call(operation, method, fresh.url, { body: { unknown_field: true } });
        await call(operation, method, fresh.url, { body: 'plain text', headers: { 'content-type': 'text/plain' } });
        await call(operation, method, fresh.url, { body: { padding: 'x'.repeat(1_100_000) } });
      }
      if (method !== 'GET' && template.includes('{incidentID}')) {
        const fresh = await make(world);
        const merged = Number(/incidents\/(\d+)/.exec(fresh.url)![1]);
        const target = await world.incident();
        await world.t.request('POST', `${V2}/incidents/${target}/merge`, { token: world.editor, body: { source_incident_ids: [merged] } });
        const refused = await call(operation, method, fresh.url, { body: fresh.body });
        expect([operation, refused.statusCode]).toEqual([operation, 409]);
      }
      if (method === 'POST') {
        const fresh = await make(world);
        const key = `openapi-${operation}`;
        await call(operation, method, fresh.url, { body: fresh.body, headers: { 'idempotency-key': key } });
        await call(operation, method, fresh.url, { body: fresh.body, headers: { 'idempotency-key': key } });
        await call(operation, method, fresh.url, { body: { other: true }, headers: { 'idempotency-key': key } });
      }
    }
    expect(problems).toEqual([]);
    const provoked = new Set(answers.map(([, status]) => status));
    for (const status of [200, 201, 204, 400, 401, 403, 404, 409, 413, 415, 422]) expect([status, provoked.has(status)]).toEqual([status, true]);
  });

  it('documents the rate limit answer (429) a developer token gets', async () => {
    const limited = await startTestApp({ RATE_LIMIT_PER_MINUTE: '1' });
    try {
      const team = await limited.createTeam('Limited');
      const { token } = await limited.issueToken(team.id, ALL_SCOPES);
      const served = conformanceTo((await limited.request('GET', `${V2}/openapi.json`)).json());
      await limited.request('GET', `${V2}/projects`, { token });
      const refused = await limited.request('GET', `${V2}/projects`, { token });
      expect(refused.statusCode).toBe(429);
      expect(served.check(`GET ${V2}/projects`, refused)).toEqual([]);
    } finally {
      await limited.close();
    }
  });

});

const TEAMS = '/api/v2/teams';
let pages = 0;

async function channel(w: World, team: number): Promise<number> {
  const created = await w.t.admin('POST', `${TEAMS}/${team}/notification-channels`, { kind: 'webhook', name: 'Ops', config: { url: 'https://hooks.example.com/ops' } });
  if (created.statusCode !== 201) throw new Error(`channel: ${created.statusCode} ${created.body}`);
  return created.json().data.id;
}

async function statusPage(w: World, team: number): Promise<number> {
  const created = await w.t.admin('POST', `${TEAMS}/${team}/status-pages`, { slug: `page-${++pages}`, title: 'Status', components: [] });
  if (created.statusCode !== 201) throw new Error(`status page: ${created.statusCode} ${created.body}`);
  return created.json().data.id;
}

async function slo(w: World, team: number, project?: number): Promise<number> {
  const projectId = project ?? (await createProject(w.t, team)).id;
  const created = await w.t.admin('POST', `${TEAMS}/${team}/slos`, { name: 'Checkout', project_id: projectId, objective_percent: 99.9 });
  if (created.statusCode !== 201) throw new Error(`slo: ${created.statusCode} ${created.body}`);
  return created.json().data.id;
}

/** How to call each application API operation successfully (fresh resources where the call consumes them). */
const adminSuccesses: Record<string, (w: World, team: number, target: Target) => Promise<Call>> = {
  [`GET ${TEAMS}`]: async () => ({ url: `${TEAMS}?limit=2` }),
  [`POST ${TEAMS}`]: async () => ({ url: TEAMS, body: { name: 'Another' } }),
  [`GET ${TEAMS}/{teamID}/tokens`]: async (_w, team) => ({ url: `${TEAMS}/${team}/tokens` }),
  [`POST ${TEAMS}/{teamID}/tokens`]: async (_w, team) => ({ url: `${TEAMS}/${team}/tokens`, body: { name: 'ci', scopes: ['monitoring:read'], role: 'viewer' } }),
  [`DELETE ${TEAMS}/{teamID}/tokens/{tokenID}`]: async (w, team) => ({ url: `${TEAMS}/${team}/tokens/${(await w.t.issueToken(team, ['monitoring:read'])).id}` }),
  [`POST ${TEAMS}/{teamID}/projects`]: async (_w, team) => ({ url: `${TEAMS}/${team}/projects`, body: { name: 'Shop', description: 'Public shop' } }),
  [`PATCH ${TEAMS}/{teamID}/projects/{projectID}`]: async (w, team) => ({ url: `${TEAMS}/${team}/projects/${(await createProject(w.t, team)).id}`, body: { name: 'Renamed' } }),
  [`DELETE ${TEAMS}/{teamID}/projects/{projectID}`]: async (w, team) => ({ url: `${TEAMS}/${team}/projects/${(await createProject(w.t, team)).id}` }),
  [`POST ${TEAMS}/{teamID}/endpoints`]: async (w, team) => ({ url: `${TEAMS}/${team}/endpoints`, body: { project_id: (await createProject(w.t, team)).id, name: 'Home', url: 'https://example.com/?key=secret', headers: { 'x-key': 'hidden' }, regions: ['eu-west', 'us-east'] } }),
  ['GET /api/v2/regions']: async () => ({ url: '/api/v2/regions' }),
  [`PATCH ${TEAMS}/{teamID}/endpoints/{endpointID}`]: async (w, team) => ({ url: `${TEAMS}/${team}/endpoints/${(await createEndpoint(w.t, team, (await createProject(w.t, team)).id)).id}`, body: { interval_seconds: 30, latency_detection_mode: 'fixed', latency_fixed_threshold_ms: 500 } }),
  [`DELETE ${TEAMS}/{teamID}/endpoints/{endpointID}`]: async (w, team) => ({ url: `${TEAMS}/${team}/endpoints/${(await createEndpoint(w.t, team, (await createProject(w.t, team)).id)).id}` }),
  [`POST ${TEAMS}/{teamID}/maintenance-windows`]: async (_w, team) => ({ url: `${TEAMS}/${team}/maintenance-windows`, body: { starts_at: '2030-01-01T00:00:00Z', ends_at: '2030-01-01T02:00:00Z', reason: 'upgrade' } }),
  [`DELETE ${TEAMS}/{teamID}/maintenance-windows/{windowID}`]: async (w, team) => {
    const created = await w.t.admin('POST', `${TEAMS}/${team}/maintenance-windows`, { starts_at: '2030-01-01T00:00:00Z', ends_at: '2030-01-01T02:00:00Z' });
    return { url: `${TEAMS}/${team}/maintenance-windows/${created.json().data.id}` };
  },
  [`POST ${TEAMS}/{teamID}/endpoints/{endpointID}/checks/import`]: async (w, team) => ({
    url: `${TEAMS}/${team}/endpoints/${(await createEndpoint(w.t, team, (await createProject(w.t, team)).id)).id}/checks/import`,
    body: { checks: [{ checked_at: '2026-01-01T00:00:00Z', success: true, status_code: 200, latency_ms: 120 }] },
  }),
  [`POST ${TEAMS}/{teamID}/endpoints/{endpointID}/verify-destination`]: async (w, team, target) => {
    const endpoint = await createEndpoint(w.t, team, (await createProject(w.t, team)).id, { url: `${target.url}/health` });
    target.tokens.set(endpoint.id, endpoint.verification_token);
    return { url: `${TEAMS}/${team}/endpoints/${endpoint.id}/verify-destination` };
  },
  [`POST ${TEAMS}/{teamID}/endpoints/{endpointID}/checks`]: async (w, team, target) => {
    const endpoint = await createEndpoint(w.t, team, (await createProject(w.t, team)).id, { url: `${target.url}/health` });
    target.tokens.set(endpoint.id, endpoint.verification_token);
    await w.t.admin('POST', `${TEAMS}/${team}/endpoints/${endpoint.id}/verify-destination`);
    return { url: `${TEAMS}/${team}/endpoints/${endpoint.id}/checks` };
  },
  [`POST ${TEAMS}/{teamID}/status-pages`]: async (w, team) => ({ url: `${TEAMS}/${team}/status-pages`, body: { slug: `page-${++pages}`, title: 'Status', components: [{ endpoint_id: (await createEndpoint(w.t, team, (await createProject(w.t, team)).id)).id }] } }),
  [`GET ${TEAMS}/{teamID}/status-pages`]: async (_w, team) => ({ url: `${TEAMS}/${team}/status-pages` }),
  [`GET ${TEAMS}/{teamID}/status-pages/{pageID}`]: async (w, team) => ({ url: `${TEAMS}/${team}/status-pages/${await statusPage(w, team)}` }),
  [`PATCH ${TEAMS}/{teamID}/status-pages/{pageID}`]: async (w, team) => ({ url: `${TEAMS}/${team}/status-pages/${await statusPage(w, team)}`, body: { title: 'Renamed' } }),
  [`DELETE ${TEAMS}/{teamID}/status-pages/{pageID}`]: async (w, team) => ({ url: `${TEAMS}/${team}/status-pages/${await statusPage(w, team)}` }),
  [`POST ${TEAMS}/{teamID}/slos`]: async (w, team) => ({ url: `${TEAMS}/${team}/slos`, body: { name: 'API', project_id: (await createProject(w.t, team)).id, objective_percent: 99.5, window_days: 7, latency_threshold_ms: 800 } }),
  [`GET ${TEAMS}/{teamID}/slos`]: async (_w, team) => ({ url: `${TEAMS}/${team}/slos` }),
  [`GET ${TEAMS}/{teamID}/slos/{sloID}`]: async (w, team) => ({ url: `${TEAMS}/${team}/slos/${await slo(w, team)}` }),
  [`PATCH ${TEAMS}/{teamID}/slos/{sloID}`]: async (w, team) => ({ url: `${TEAMS}/${team}/slos/${await slo(w, team)}`, body: { window_days: 14 } }),
  [`DELETE ${TEAMS}/{teamID}/slos/{sloID}`]: async (w, team) => ({ url: `${TEAMS}/${team}/slos/${await slo(w, team)}` }),
  [`POST ${TEAMS}/{teamID}/notification-channels`]: async (_w, team) => ({ url: `${TEAMS}/${team}/notification-channels`, body: { kind: 'webhook', name: 'Ops', config: { url: 'https://hooks.example.com/ops' }, events: ['incident.opened'] } }),
  [`GET ${TEAMS}/{teamID}/notification-channels`]: async (w, team) => {
    await channel(w, team);
    return { url: `${TEAMS}/${team}/notification-channels?limit=5` };
  },
  [`GET ${TEAMS}/{teamID}/notification-channels/{channelID}`]: async (w, team) => ({ url: `${TEAMS}/${team}/notification-channels/${await channel(w, team)}` }),
  [`PATCH ${TEAMS}/{teamID}/notification-channels/{channelID}`]: async (w, team) => ({ url: `${TEAMS}/${team}/notification-channels/${await channel(w, team)}`, body: { name: 'Renamed', enabled: false } }),
  [`DELETE ${TEAMS}/{teamID}/notification-channels/{channelID}`]: async (w, team) => ({ url: `${TEAMS}/${team}/notification-channels/${await channel(w, team)}` }),
  [`POST ${TEAMS}/{teamID}/notification-channels/{channelID}/test`]: async (w, team) => ({ url: `${TEAMS}/${team}/notification-channels/${await channel(w, team)}/test` }),
  [`POST ${TEAMS}/{teamID}/notification-channels/{channelID}/rotate-secret`]: async (w, team) => ({ url: `${TEAMS}/${team}/notification-channels/${await channel(w, team)}/rotate-secret` }),
  [`GET ${TEAMS}/{teamID}/notification-channels/{channelID}/deliveries`]: async (w, team) => {
    const id = await channel(w, team);
    await w.t.admin('POST', `${TEAMS}/${team}/notification-channels/${id}/test`);
    return { url: `${TEAMS}/${team}/notification-channels/${id}/deliveries?limit=5` };
  },
  // The incident is one of the public tests' team (incidents are created through the public API).
  [`GET ${TEAMS}/{teamID}/incidents/{incidentID}/history`]: async (w) => ({ url: `${TEAMS}/${w.team}/incidents/${await w.incident()}/history?at=2099-01-01T00:00:00Z` }),
  [`GET ${TEAMS}/{teamID}/audit/verify`]: async (_w, team) => ({ url: `${TEAMS}/${team}/audit/verify` }),
  [`GET ${TEAMS}/{teamID}/audit-export`]: async (_w, team) => ({ url: `${TEAMS}/${team}/audit-export?from=2020-01-01T00:00:00Z` }),
  [`GET /api/v2/audit/public-key`]: async () => ({ url: '/api/v2/audit/public-key' }),
};

describe('the application API document matches the live service', () => {
  const problems: string[] = [];
  const provoked = new Set<number>();
  let target: Target;
  beforeAll(async () => {
    target = await startTarget();
  });
  afterAll(async () => {
    await target.close();
  });

  async function call(operation: string, method: string, url: string, options: { token?: string | null; body?: unknown; headers?: Record<string, string> } = {}): Promise<InjectResponse> {
    const response = await world.t.request(method, url, { token: options.token === undefined ? ADMIN_TOKEN : options.token, body: options.body, headers: options.headers });
    provoked.add(response.statusCode);
    problems.push(...world.adminDoc.check(operation, response));
    return response;
  }

  it('has its own page and lists every application route in the table of calls', async () => {
    const page = await world.t.request('GET', '/docs/admin');
    expect([page.statusCode, String(page.headers['content-type'])]).toEqual([200, expect.stringContaining('text/html')]);
    expect(world.adminDoc.operations().sort()).toEqual(Object.keys(adminSuccesses).sort());
  });

  it('answers each route as documented: success and every error a client can provoke', async () => {
    const team = (await world.t.createTeam('Provisioned')).id;
    for (const operation of world.adminDoc.operations()) {
      const make = adminSuccesses[operation];
      if (!make) continue;
      const method = methodOf(operation);
      const template = operation.slice(method.length + 1);
      const success = await make(world, team, target);
      const ok = await call(operation, method, success.url, { body: success.body });
      expect([operation, ok.statusCode < 300]).toEqual([operation, true]);
      await call(operation, method, success.url, { token: null, body: success.body });
      await call(operation, method, success.url, { token: world.editor, body: success.body });
      if (template.includes('{')) await call(operation, method, unknownIds(success.url, template), { body: success.body });
      if (method === 'GET' && template.endsWith('/history')) await call(operation, method, `${success.url.split('?')[0]}?at=yesterday`);
      else if (method === 'GET') await call(operation, method, `${success.url.split('?')[0]}?limit=0`);
      if (world.adminDoc.hasBody(operation)) {
        const fresh = await make(world, team, target);
        await call(operation, method, fresh.url, { body: { unknown_field: true } });
        await call(operation, method, fresh.url, { body: 'plain text', headers: { 'content-type': 'text/plain' } });
        await call(operation, method, fresh.url, { body: { padding: 'x'.repeat(template.endsWith('/import') ? 17_000_000 : 1_100_000) } });
      }
      if (method === 'POST') {
        const fresh = await make(world, team, target);
        const key = `openapi-${operation}`;
        await call(operation, method, fresh.url, { body: fresh.body, headers: { 'idempotency-key': key } });
        await call(operation, method, fresh.url, { body: fresh.body, headers: { 'idempotency-key': key } });
        await call(operation, method, fresh.url, { body: { other: true }, headers: { 'idempotency-key': key } });
      }
    }
    // Refusals of the commands themselves.
    const project = (await createProject(world.t, team)).id;
    const endpoint = await createEndpoint(world.t, team, project, { url: `${target.url}/unverified` });
    await call(`DELETE ${TEAMS}/{teamID}/projects/{projectID}`, 'DELETE', `${TEAMS}/${team}/projects/${project}`);
    await call(`PATCH ${TEAMS}/{teamID}/endpoints/{endpointID}`, 'PATCH', `${TEAMS}/${team}/endpoints/${endpoint.id}`, { body: { enabled: true } });
    await call(`POST ${TEAMS}/{teamID}/endpoints/{endpointID}/checks`, 'POST', `${TEAMS}/${team}/endpoints/${endpoint.id}/checks`);
    await call(`POST ${TEAMS}/{teamID}/endpoints/{endpointID}/verify-destination`, 'POST', `${TEAMS}/${team}/endpoints/${endpoint.id}/verify-destination`);

    expect(problems).toEqual([]);
    for (const status of [200, 201, 204, 400, 401, 404, 409, 413, 415, 422]) expect([status, provoked.has(status)]).toEqual([status, true]);
  });
});
