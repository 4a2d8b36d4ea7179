/** `npm run admin -- create-channel / test-channel / channel-deliveries` as a child process against a listening service. */
import { jest } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { runNode } from '../support/child-process.js';
import { makeTempDir, transpileForChildProcess } from '../support/event-store-fixtures.js';
import { startReceiver, type Receiver } from '../support/notification-receiver.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/test-app.js';
import { eventually } from './support.js';

jest.setTimeout(60_000);
const CLI = 'src/cli/admin.ts';

describe('npm run admin: notification channels', () => {
  let t: TestApp;
  let receiver: Receiver;
  let base: string;
  const compiled = makeTempDir('admin-cli-js-');
  let script: string;

  const admin = async (...args: string[]) => {
    const result = await runNode(script, ['--url', base, ...args], { env: { ADMIN_TOKEN } });
    if (result.stderr) process.stderr.write(result.stderr);
    return result;
  };

  beforeAll(async () => {
    await transpileForChildProcess([CLI], compiled.path);
    script = join(compiled.path, CLI.replace(/\.ts$/, '.js'));
    receiver = await startReceiver();
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    compiled.remove();
  });

  it('creates a webhook channel, sends a test ping and lists the delivery', async () => {
    const team = await t.createTeam('CLI');
    const created = await admin('create-channel', String(team.id), '--kind', 'webhook', '--name', 'Ops', '--channel-url', `${receiver.url}/cli`, '--events', 'incident.opened,incident.resolved');
    expect(created.code).toBe(0);
    const channel = JSON.parse(created.stdout).data;
    expect(channel).toMatchObject({ name: 'Ops', kind: 'webhook', events: ['incident.opened', 'incident.resolved'], url_configured: true, secret: expect.stringMatching(/^whsec_/) });

    const tested = await admin('test-channel', String(team.id), String(channel.id));
    expect(tested.code).toBe(0);
    const { delivery_id } = JSON.parse(tested.stdout).data;
    await eventually('the ping', async () => receiver.received.some((r) => r.headers['webhook-id'] === delivery_id));
    const deliveries = await eventually('delivered', async () => {
      const listed = JSON.parse((await admin('channel-deliveries', String(team.id), String(channel.id))).stdout).data;
      return listed[0]?.state === 'delivered' ? listed : null;
    });
    expect(deliveries[0]).toMatchObject({ id: delivery_id, type: 'ping' });

    const missing = await admin('channel', String(team.id), '999');
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout)).toMatchObject({ status: 404, code: 'not_found' });
  });
});
