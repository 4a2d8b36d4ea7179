#!/usr/bin/env node
/**
 * A short end-to-end run against a running deployment, through its public HTTP surface only:
 * a team and a token, an endpoint on a target, scheduled checks recorded and readable through
 * every API process, an outage that opens an automatic incident, and (when told how) one
 * projector killed while the views go on: the incident resolves and new checks keep appearing.
 *
 *   ADMIN_TOKEN=... node .ci/e2e.mjs --api http://127.0.0.1:3000 [--api http://127.0.0.1:3001]
 *       [--target-url http://target:8080 --target-control http://127.0.0.1:8080]
 *       [--kill-projector 'docker compose kill projector-1'] [--step-timeout 180]
 *
 * Without --target-url the script starts the target itself on 127.0.0.1 (the service must be able
 * to reach it: a service on the same host, e.g. `npm start`). Exit 0 when every step passed,
 * 1 with the step that failed. Plain Node 20+, no dependencies.
 */
import { execSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { startTarget } from './e2e-target.mjs';

const { values } = parseArgs({
  options: {
    api: { type: 'string', multiple: true, default: ['http://127.0.0.1:3000'] },
    'target-url': { type: 'string' },
    'target-control': { type: 'string' },
    'kill-projector': { type: 'string' },
    'step-timeout': { type: 'string', default: '180' },
  },
});
const ADMIN_TOKEN = process.env.ADMIN_TOKEN;
if (!ADMIN_TOKEN) fail('setup', 'ADMIN_TOKEN is not set (the admin token of the deployment under test)');
const apis = values.api.map((url) => url.replace(/\/$/, ''));
const STEP_MS = Number(values['step-timeout']) * 1000;
let requests = 0;
/** Requests alternate between the API processes: a write through one is read through another. */
const nextApi = () => apis[requests++ % apis.length];

function log(message) {
  process.stdout.write(`[e2e ${new Date().toISOString()}] ${message}\n`);
}
function fail(step, message) {
  process.stderr.write(`[e2e] FAILED at "${step}": ${message}\n`);
  process.exit(1);
}

async function call(method, path, { token = ADMIN_TOKEN, body, api = nextApi() } = {}) {
  const response = await fetch(`${api}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = { text };
  }
  return { status: response.status, json, api };
}

async function expectStatus(step, expected, promise) {
  const response = await promise;
  if (response.status !== expected) fail(step, `${response.api} answered ${response.status}, expected ${expected}: ${JSON.stringify(response.json)}`);
  return response.json;
}

/** Polls `probe` until it returns a truthy value, for at most the step timeout. */
async function eventually(step, probe) {
  const deadline = Date.now() + STEP_MS;
  let last;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
      last = value;
    } catch (error) {
      last = error instanceof Error ? error.message : error;
    }
    if (Date.now() > deadline) fail(step, `not reached within ${STEP_MS / 1000} s; last seen: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

// The target: started here, or a container the script controls over HTTP.
let target;
let local = null;
if (values['target-url']) {
  const control = (values['target-control'] ?? values['target-url']).replace(/\/$/, '');
  target = {
    url: values['target-url'].replace(/\/$/, ''),
    async set(change) {
      const response = await fetch(`${control}/__control`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(change) });
      if (!response.ok) throw new Error(`target control answered ${response.status}`);
    },
  };
} else {
  local = await startTarget();
  target = {
    url: local.url,
    async set(change) {
      if (change.status !== undefined) local.state.status = change.status;
      for (const [id, token] of Object.entries(change.tokens ?? {})) local.state.tokens.set(id, token);
    },
  };
}

try {
  log(`API processes: ${apis.join(', ')}; target ${target.url}`);
  for (const api of apis) {
    await eventually(`${api} ready`, async () => (await fetch(`${api}/health/ready`)).ok);
  }

  const team = (await expectStatus('create a team', 201, call('POST', '/api/v2/teams', { body: { name: `e2e ${new Date().toISOString()}` } }))).data;
  const token = (await expectStatus('issue a token', 201, call('POST', `/api/v2/teams/${team.id}/tokens`, { body: { name: 'e2e', role: 'editor', scopes: ['monitoring:read', 'analytics:read', 'incidents:read', 'incidents:write'] } }))).data.token;
  const project = (await expectStatus('create a project', 201, call('POST', `/api/v2/teams/${team.id}/projects`, { body: { name: 'e2e', description: '' } }))).data;
  const endpoint = (
    await expectStatus(
      'create an endpoint',
      201,
      call('POST', `/api/v2/teams/${team.id}/endpoints`, {
        body: { project_id: project.id, name: 'target', url: `${target.url}/health`, method: 'GET', expected_status: 200, interval_seconds: 1, timeout_seconds: 1 },
      }),
    )
  ).data;
  log(`team ${team.id}, endpoint ${endpoint.id} on ${target.url}/health`);

  await target.set({ status: 200, tokens: { [endpoint.id]: endpoint.verification_token } });
  await expectStatus('verify the destination', 200, call('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/verify-destination`));
  await expectStatus('enable the endpoint', 200, call('PATCH', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}`, { body: { enabled: true } }));

  const checks = async () => (await expectStatus('list checks', 200, call('GET', `/api/public/v2/endpoints/${endpoint.id}/checks?limit=100`, { token }))).data;
  await eventually('scheduled checks recorded, readable through every API process', async () => {
    const seen = await Promise.all(apis.map(async (api) => (await expectStatus('list checks', 200, call('GET', `/api/public/v2/endpoints/${endpoint.id}/checks?limit=100`, { token, api }))).data));
    return seen.every((list) => list.filter((check) => check.success).length >= 2);
  });
  log('checks recorded');

  await target.set({ status: 503 });
  const incidentsOpen = async () =>
    (await expectStatus('list incidents', 200, call('GET', `/api/public/v2/incidents?endpoint_id=${endpoint.id}&source=automatic&state=open`, { token }))).data;
  const [incident] = await eventually('the outage opens an automatic incident', async () => {
    const open = await incidentsOpen();
    return open.length > 0 ? open : null;
  });
  log(`outage: incident ${incident.id} open`);

  const killedAt = new Date().toISOString();
  if (values['kill-projector']) {
    log(`killing a projector: ${values['kill-projector']}`);
    execSync(values['kill-projector'], { stdio: 'inherit' });
  } else {
    log('no --kill-projector command given: the views are checked to go on without one killed');
  }

  await target.set({ status: 200 });
  await eventually('the incident resolves in the views after the target recovers', async () => {
    const detail = (await expectStatus('read the incident', 200, call('GET', `/api/public/v2/incidents/${incident.id}`, { token }))).data;
    return detail.resolved_at ? detail : null;
  });
  await eventually('checks recorded after the kill appear in the views', async () => (await checks()).some((check) => check.success && check.checked_at > killedAt));
  log('the views went on: incident resolved, new checks listed');
  log('PASSED');
} finally {
  await local?.close();
}
