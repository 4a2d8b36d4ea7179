/**
 * Notification channels through the application API, with deliveries to local receivers on
 * real sockets, verified with the `standardwebhooks` package (an implementation we did not write).
 */
import { jest } from '@jest/globals';
import { CommandBus } from '@nestjs/cqrs';
import { Webhook } from 'standardwebhooks';
import { CreateChannel, RotateChannelSecret } from '../../src/notifications/application/channel.commands.js';
import { runIdempotent } from '../../src/platform/es/idempotency-scope.js';
import { eventually } from '../e2e/support.js';
import { signatureHeaders, startReceiver, type Receiver } from '../support/notification-receiver.js';
import { ALL_SCOPES, startTestApp, type TestApp } from '../support/test-app.js';

jest.setTimeout(60_000);

const verify = (secret: string, r: { body: string; headers: Record<string, unknown> }) =>
  new Webhook(secret).verify(r.body, signatureHeaders(r));

describe('notification channels', () => {
  let t: TestApp;
  let receiver: Receiver;
  let team: { id: number };
  const base = () => `/api/v2/teams/${team.id}/notification-channels`;

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestApp({ NOTIFY_RETRY_SCHEDULE_MS: '50,50,50' });
    team = await t.createTeam('Notify');
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.queue.length = 0;
    receiver.status = 200;
  });

  async function webhook(extra: Record<string, unknown> = {}) {
    const created = await t.admin('POST', base(), { name: 'Hook', kind: 'webhook', config: { url: `${receiver.url}/hooks/s3cr3t-path?token=abc` }, ...extra });
    expect(created.statusCode).toBe(201);
    return created.json().data;
  }

  it('creates a webhook channel: the secret once, the URL never', async () => {
    const channel = await webhook();
    expect(channel.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(channel.secret.slice(6), 'base64')).toHaveLength(32);
    expect(channel).toMatchObject({ kind: 'webhook', name: 'Hook', url_configured: true, host: new URL(receiver.url).host, enabled: true, events: null, project_ids: null });

    const got = await t.admin('GET', `${base()}/${channel.id}`);
    expect(got.statusCode).toBe(200);
    expect(got.json().data.secret).toBeUndefined();
    const listed = await t.admin('GET', base());
    for (const body of [got.body, listed.body]) {
      expect(body).not.toContain('s3cr3t-path');
      expect(body).not.toContain('token=abc');
      expect(body).not.toContain(channel.secret);
    }
    expect(listed.json().data.map((c: any) => c.id)).toContain(channel.id);
  });

  it('delivers a signed ping on test, even to a disabled channel, and lists the delivery', async () => {
    const channel = await webhook({ enabled: false, events: ['incident.opened'] });
    const test = await t.admin('POST', `${base()}/${channel.id}/test`);
    expect(test.statusCode).toBe(202);
    const deliveryId = test.json().data.delivery_id;
    const [ping] = await eventually('the ping', async () => (receiver.of('ping').length > 0 ? receiver.of('ping') : null));
    expect(ping.path).toBe('/hooks/s3cr3t-path?token=abc');
    expect(ping.headers['webhook-id']).toBe(deliveryId);
    expect(verify(channel.secret, ping)).toMatchObject({ type: 'ping' });
    expect(ping.json.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const deliveries = await eventually('the delivery to show delivered', async () => {
      const listed = (await t.admin('GET', `${base()}/${channel.id}/deliveries`)).json();
      return listed.data[0]?.state === 'delivered' ? listed : null;
    });
    expect(deliveries.data[0]).toMatchObject({ id: deliveryId, type: 'ping', state: 'delivered', attempts: 1, last_status_code: 200, last_error: null, next_attempt_at: null });
    expect(deliveries.data[0].delivered_at).toEqual(expect.any(String));
    expect(JSON.stringify(deliveries)).not.toContain('s3cr3t-path');
  });

  it('retries a receiver answering 500 with the same webhook-id until it answers 2xx', async () => {
    const channel = await webhook();
    receiver.queue.push(500, 500);
    const test = await t.admin('POST', `${base()}/${channel.id}/test`);
    const deliveryId = test.json().data.delivery_id;
    await eventually('three attempts', async () => receiver.of('ping').length >= 3);
    expect(receiver.of('ping').map((r) => r.headers['webhook-id'])).toEqual([deliveryId, deliveryId, deliveryId]);
    const delivery = await eventually('delivered', async () => {
      const [d] = (await t.admin('GET', `${base()}/${channel.id}/deliveries`)).json().data;
      return d.state === 'delivered' ? d : null;
    });
    expect(delivery).toMatchObject({ attempts: 3, last_status_code: 200 });
  });

  it('gives up after the schedule, saying why; a refused connection has no status code', async () => {
    const channel = await t.admin('POST', base(), { name: 'Dead', kind: 'webhook', config: { url: 'http://127.0.0.1:9/x' } });
    await t.admin('POST', `${base()}/${channel.json().data.id}/test`);
    const delivery = await eventually('failed', async () => {
      const [d] = (await t.admin('GET', `${base()}/${channel.json().data.id}/deliveries`)).json().data;
      return d?.state === 'failed' ? d : null;
    });
    expect(delivery).toMatchObject({ attempts: 4, last_status_code: null, next_attempt_at: null, delivered_at: null });
    expect(delivery.last_error).toMatch(/^refused: /);
  });

  it('signs with both secrets for a day after rotation', async () => {
    const channel = await webhook();
    const rotated = await t.admin('POST', `${base()}/${channel.id}/rotate-secret`);
    expect(rotated.statusCode).toBe(200);
    const { secret } = rotated.json().data;
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(channel.secret);
    expect(Date.parse(rotated.json().data.secret_rotation_ends_at) - Date.now()).toBeGreaterThan(23 * 3600_000);
    await t.admin('POST', `${base()}/${channel.id}/test`);
    const [ping] = await eventually('the ping', async () => (receiver.of('ping').length > 0 ? receiver.of('ping') : null));
    expect(String(ping.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(secret, ping)).toMatchObject({ type: 'ping' });
    expect(verify(channel.secret, ping)).toMatchObject({ type: 'ping' });
  });

  it('never replays a secret: a repeated create with the same Idempotency-Key answers secret null', async () => {
    const body = { name: 'Once', kind: 'webhook', config: { url: `${receiver.url}/once` } };
    const headers = { 'idempotency-key': 'create-once' };
    const first = await t.request('POST', base(), { token: 'test-admin-token-0123456789', body, headers });
    const second = await t.request('POST', base(), { token: 'test-admin-token-0123456789', body, headers });
    expect(first.statusCode).toBe(201);
    expect(first.json().data.secret).toMatch(/^whsec_/);
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.json().data).toMatchObject({ id: first.json().data.id, secret: null });
    expect(second.body).not.toContain(first.json().data.secret);
  });

  it('a keyed retry found in the log (its answer was never kept) answers the same channel without a made-up secret', async () => {
    // As if the process died after its append and before it kept the answer: the retry runs the
    // command again under the same key, and only the log knows what the first attempt did.
    const bus = t.app.get(CommandBus);
    const context = { actor: 'admin', requestId: null };
    const create = () => runIdempotent('admin:create-crash', () => bus.execute(new CreateChannel(team.id, { name: 'Crash', kind: 'webhook', config: { url: `${receiver.url}/crash` } }, context)));
    const first = await create();
    const retry = await create();
    expect(retry.channel.id).toBe(first.channel.id);
    expect(first.secret).toMatch(/^whsec_/);
    expect(retry.secret).toBeNull();
    const rotate = () => runIdempotent('admin:rotate-crash', () => bus.execute(new RotateChannelSecret(team.id, first.channel.id, context)));
    const rotated = await rotate();
    expect((await rotate()).secret).toBeNull();
    // The retry rotated nothing: the first rotation's secret signs, alongside the original.
    await t.admin('POST', `${base()}/${first.channel.id}/test`);
    const [ping] = await eventually('the ping', async () => (receiver.of('ping').length > 0 ? receiver.of('ping') : null));
    expect(String(ping.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(rotated.secret!, ping)).toMatchObject({ type: 'ping' });
    expect(verify(first.secret!, ping)).toMatchObject({ type: 'ping' });
  });

  it('updates, answers 404 for other teams, and deletes (pending deliveries cancelled, then 404)', async () => {
    const channel = await webhook();
    const patched = await t.admin('PATCH', `${base()}/${channel.id}`, { name: 'Renamed', events: ['incident.opened', 'alert.triggered'] });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().data).toMatchObject({ name: 'Renamed', events: ['incident.opened', 'alert.triggered'] });

    const other = await t.createTeam('Other');
    expect((await t.admin('GET', `/api/v2/teams/${other.id}/notification-channels/${channel.id}`)).statusCode).toBe(404);

    receiver.status = 500;
    await t.admin('POST', `${base()}/${channel.id}/test`);
    await eventually('a failed attempt', async () => receiver.of('ping').length >= 1);
    expect((await t.admin('DELETE', `${base()}/${channel.id}`)).statusCode).toBe(204);
    expect((await t.admin('GET', `${base()}/${channel.id}`)).statusCode).toBe(404);
    expect((await t.admin('GET', `${base()}/${channel.id}/deliveries`)).statusCode).toBe(404);
    // An attempt already on the wire when the channel was deleted may still land; none starts after.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const seen = receiver.of('ping').length;
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(receiver.of('ping').length).toBe(seen);
  });

  it('disables a channel whose receiver answers 410 Gone', async () => {
    const channel = await webhook();
    receiver.status = 410;
    await t.admin('POST', `${base()}/${channel.id}/test`);
    const disabled = await eventually('disabled', async () => {
      const data = (await t.admin('GET', `${base()}/${channel.id}`)).json().data;
      return data.enabled === false ? data : null;
    });
    expect(disabled.disabled_reason).toBe('status: 410 Gone');
  });

  it('refuses bad input with every violated rule', async () => {
    const response = await t.admin('POST', base(), { name: '', kind: 'webhook', config: { to: ['a@b.c'] }, events: ['nope'], project_ids: [999] });
    expect(response.statusCode).toBe(400);
    const fields = response.json().errors.map((e: any) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['name', 'events', 'config.url', 'config.to']));
    const email = await t.admin('POST', base(), { name: 'Mail', kind: 'email', config: { to: [] } });
    expect(email.statusCode).toBe(400);
    const unknownProject = await t.admin('POST', base(), { name: 'P', kind: 'slack', config: { url: 'https://hooks.example.com/x' }, project_ids: [999] });
    expect(unknownProject.json().errors).toEqual([expect.objectContaining({ field: 'project_ids', code: 'not_found' })]);
  });

  it('notifies manual incidents and their checkpoints, never comments', async () => {
    const own = await t.createTeam('Incidents');
    const created = await t.admin('POST', `/api/v2/teams/${own.id}/notification-channels`, { name: 'Hook', kind: 'webhook', config: { url: `${receiver.url}/incidents` } });
    const channel = created.json().data;
    const { token } = await t.issueToken(own.id, ALL_SCOPES);
    const project = (await t.admin('POST', `/api/v2/teams/${own.id}/projects`, { name: 'Web' })).json().data;
    const incidentCreated = await t.request('POST', '/api/public/v2/incidents', { token, body: { title: 'Checkout broken', project_id: project.id, severity: 'critical' } });
    expect(incidentCreated.statusCode).toBe(201);
    const incident = incidentCreated.json().data;
    await t.request('POST', `/api/public/v2/incidents/${incident.id}/comments`, { token, body: { body: 'private note' } });
    await t.request('POST', `/api/public/v2/incidents/${incident.id}/checkpoints`, { token, body: { title: 'Fix deployed', body: 'Watching.' } });
    await t.request('PATCH', `/api/public/v2/incidents/${incident.id}/status`, { token, body: { resolved: true } });
    const mine = () => receiver.received.filter((r) => r.path === '/incidents');
    await eventually('resolved', async () => mine().some((r) => r.json.type === 'incident.resolved'));
    expect(mine().map((r) => r.json.type)).toEqual(['incident.opened', 'incident.checkpoint_added', 'incident.resolved']);
    const [opened, checkpoint, resolved] = mine();
    expect(verify(channel.secret, opened)).toBeTruthy();
    expect(opened.json.data.incident).toMatchObject({ id: incident.id, title: 'Checkout broken', severity: 'critical', resolved_at: null, source: 'manual' });
    const publicView = (await t.request('GET', `/api/public/v2/incidents/${incident.id}`, { token })).json().data;
    for (const key of Object.keys(resolved.json.data.incident)) expect(resolved.json.data.incident[key]).toEqual(publicView[key]);
    expect(checkpoint.json.data.checkpoint).toMatchObject({ title: 'Fix deployed' });
    expect(JSON.stringify(receiver.received)).not.toContain('private note');
  });

  it('notifies updates, reopening and merges, filtered by the channel\'s events and projects', async () => {
    const own = await t.createTeam('Merges');
    const { token } = await t.issueToken(own.id, ALL_SCOPES);
    const web = (await t.admin('POST', `/api/v2/teams/${own.id}/projects`, { name: 'Web' })).json().data;
    const api = (await t.admin('POST', `/api/v2/teams/${own.id}/projects`, { name: 'API' })).json().data;
    const base = `/api/v2/teams/${own.id}/notification-channels`;
    await t.admin('POST', base, { name: 'All', kind: 'webhook', config: { url: `${receiver.url}/all` } });
    await t.admin('POST', base, { name: 'Merges of Web', kind: 'webhook', config: { url: `${receiver.url}/web-merges` }, events: ['incident.merged'], project_ids: [web.id] });
    const open = async (title: string, projectId: number) => (await t.request('POST', '/api/public/v2/incidents', { token, body: { title, project_id: projectId } })).json().data;
    const target = await open('Target', web.id);
    const source = await open('Source', api.id);
    await t.request('PATCH', `/api/public/v2/incidents/${target.id}`, { token, body: { severity: 'critical' } });
    await t.request('PATCH', `/api/public/v2/incidents/${source.id}/status`, { token, body: { resolved: true } });
    await t.request('PATCH', `/api/public/v2/incidents/${source.id}/status`, { token, body: { resolved: false } });
    const merged = await t.request('POST', `/api/public/v2/incidents/${target.id}/merge`, { token, body: { source_incident_ids: [source.id] } });
    expect(merged.statusCode).toBe(200);
    const at = (path: string) => receiver.received.filter((r) => r.path === path).map((r) => r.json);
    await eventually('the merge', async () => at('/all').some((p) => p.type === 'incident.merged') && at('/web-merges').length > 0);
    expect(at('/all').map((p) => [p.type, p.data.incident.id])).toEqual([
      ['incident.opened', target.id],
      ['incident.opened', source.id],
      ['incident.updated', target.id],
      ['incident.resolved', source.id],
      ['incident.reopened', source.id],
      ['incident.merged', target.id],
    ]);
    const [merge] = at('/web-merges');
    expect(merge.data.incident).toMatchObject({ id: target.id, severity: 'critical' });
    // The sources as the API's detail of the target lists them, merge time included.
    expect(merge.data.merged_incidents).toEqual(merged.json().data.merged_incidents);
    expect(merge.data.merged_incidents).toEqual([{ id: source.id, title: 'Source', merged_at: expect.any(String) }]);
  });
});
