/**
 * The service (production build, child process) is killed with SIGKILL while a delivery is on its
 * way: the incident was appended and the receiver holds the request, but no answer was recorded.
 * After a restart the same delivery (same webhook-id, same body) goes out again and is recorded
 * delivered: nothing lost, and receivers deduplicate by webhook-id.
 */
import { jest } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { startReceiver, type Receiver, signatureHeaders } from '../support/notification-receiver.js';
import { callService, type SuiteServices, suiteServices } from '../support/service-process.js';
import { eventually } from './support.js';

jest.setTimeout(180_000);

const ADMIN = 'notify-crash-admin-token-0123456789';

describe('notifications survive a crash of the service', () => {
  let services: SuiteServices;
  let receiver: Receiver;
  beforeAll(async () => {
    services = await suiteServices('notify-crash-');
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await services?.close();
    await receiver?.close();
  });

  it('SIGKILL between append and delivery still delivers, with the same webhook-id, after a restart', async () => {
    const env = { ADMIN_TOKEN: ADMIN };
    const first = await services.start(env);
    const team = (await callService(first, 'POST', '/api/v2/teams', ADMIN, { name: 'Crash' })).body.data;
    const editor = (await callService(first, 'POST', `/api/v2/teams/${team.id}/tokens`, ADMIN, { name: 'e', scopes: ['incidents:read', 'incidents:write'], role: 'editor' })).body.data.token;
    const project = (await callService(first, 'POST', `/api/v2/teams/${team.id}/projects`, ADMIN, { name: 'Web' })).body.data;
    const channel = (await callService(first, 'POST', `/api/v2/teams/${team.id}/notification-channels`, ADMIN, { name: 'Ops', kind: 'webhook', config: { url: `${receiver.url}/ops` } })).body.data;

    receiver.delayMs = 120_000; // holds the request: the first attempt never completes
    const incident = await callService(first, 'POST', '/api/public/v2/incidents', editor, { project_id: project.id, title: 'Database down' });
    expect(incident.status).toBe(201);
    await eventually('the first attempt to reach the receiver', async () => receiver.received.length > 0);
    await first.kill('SIGKILL');
    const [held] = receiver.received;

    receiver.delayMs = 0;
    const second = await services.start(env);
    await eventually('the delivery again after the restart', async () => receiver.received.length > 1, 90_000);
    const again = receiver.received[1];
    expect(again.headers['webhook-id']).toBe(held.headers['webhook-id']);
    expect(again.body).toBe(held.body);
    const verified = new Webhook(channel.secret).verify(again.body, signatureHeaders(again)) as any;
    expect(verified).toMatchObject({ type: 'incident.opened', data: { incident: { id: incident.body.data.id, title: 'Database down' } } });

    const deliveries = await eventually('recorded delivered', async () => {
      const listed = (await callService(second, 'GET', `/api/v2/teams/${team.id}/notification-channels/${channel.id}/deliveries`, ADMIN)).body.data;
      return listed[0]?.state === 'delivered' ? listed : null;
    });
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ id: held.headers['webhook-id'], type: 'incident.opened', attempts: 1, last_status_code: 200 });
  });
});
