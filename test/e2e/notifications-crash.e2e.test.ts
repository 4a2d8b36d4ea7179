/**
 * A notifier process (reactor + delivery worker on the service's stores) is killed with SIGKILL
 * while a delivery is on its way: the event was appended, the receiver has the request, but no
 * answer was recorded. After a restart the same delivery (same webhook-id) is sent again and
 * recorded delivered: nothing lost, and receivers deduplicate by webhook-id.
 */
import { jest } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { SqliteEventStore } from '../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { SqliteReadStore } from '../../src/platform/read-store/sqlite/sqlite-read-store.js';
import { CHANNEL_CREATED, channelStream } from '../../src/notifications/domain/channel.js';
import { INCIDENT_OPENED, incidentStreamId } from '../../src/incidents/domain/events.js';
import { ATTEMPTS_COLLECTION } from '../../src/notifications/application/attempt-store.js';
import { makeTempDir, runtimeSources, transpileForChildProcess } from '../support/event-store-fixtures.js';
import { startReceiver } from '../support/notification-receiver.js';
import { eventually } from './support.js';

jest.setTimeout(120_000);

const FIXTURE = 'test/support/fixtures/notifier-process.ts';

function startNotifier(script: string, dataDir: string): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], {
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        ADMIN_TOKEN: 'crash-test-admin-token-0123',
        EVENTSTORE_URL: '',
        MONGODB_URL: '',
        LOG_LEVEL: 'silent',
        NOTIFY_TIMEOUT_MS: '1000',
        NOTIFY_RETRY_SCHEDULE_MS: '100,100,100',
        NODE_PATH: join(process.cwd(), 'node_modules'),
      },
    });
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve(child);
    });
    child.on('exit', (code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`notifier exited ${code}: ${stderr}`));
    });
  });
}

const killed = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });

describe('notifications survive a crash', () => {
  it('SIGKILL between append and delivery still delivers, with the same webhook-id, after a restart', async () => {
    const dir = makeTempDir('notify-crash-');
    const compiled = makeTempDir('notify-crash-js-');
    const receiver = await startReceiver();
    receiver.delayMs = 60_000; // holds every request: the first attempt never completes
    let child: ChildProcess | null = null;
    try {
      await transpileForChildProcess(process.cwd(), runtimeSources(FIXTURE), compiled.path);
      const script = join(compiled.path, FIXTURE.replace(/\.ts$/, '.js'));
      child = await startNotifier(script, dir.path);

      const events = new SqliteEventStore(join(dir.path, 'events.sqlite'));
      const now = new Date().toISOString();
      await events.append(channelStream(1), [{ type: CHANNEL_CREATED, data: { channel_id: 1, team_id: 1, name: 'Hook', kind: 'webhook', config: { url: `${receiver.url}/hook` }, secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`, events: null, project_ids: null, enabled: true, created_at: now } }], { expectedRevision: 'no_stream' });
      const opened = {
        incident_id: 1, team_id: 1, project_id: 1, endpoint_ids: [], title: 'Database down', type: 'availability', severity: 'critical', detection_reason: 'test',
        metadata: {}, status_id: 1, status_name: 'Investigating', auto_resolve: false, first_error_at: now, last_error_at: now, source: 'manual', opened_at: now,
      };
      await events.append(incidentStreamId(1), [{ type: INCIDENT_OPENED, data: opened }], { expectedRevision: 'no_stream' });

      await eventually('the first attempt to reach the receiver', async () => receiver.received.length > 0);
      await killed(child);
      child = null;
      const first = receiver.received[0];
      expect(first.json).toMatchObject({ type: 'incident.opened', data: { incident: { id: 1, title: 'Database down' } } });

      receiver.delayMs = 0;
      child = await startNotifier(script, dir.path);
      await eventually('the delivery again after the restart', async () => receiver.received.length > 1, 60_000);
      expect(receiver.received[1].headers['webhook-id']).toBe(first.headers['webhook-id']);
      expect(receiver.received[1].body).toBe(first.body);

      const views = new SqliteReadStore(join(dir.path, 'views.sqlite'));
      const state = await eventually('recorded delivered', async () => {
        const doc = await views.get(ATTEMPTS_COLLECTION, String(first.headers['webhook-id']));
        return doc?.state === 'delivered' ? doc : null;
      });
      expect(state).toMatchObject({ attempts: 1, last_status_code: 200 });
      await views.close();
      await events.close();
    } finally {
      if (child) await killed(child);
      await receiver.close();
      dir.remove();
      compiled.remove();
    }
  });
});
