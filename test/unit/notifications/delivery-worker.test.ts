/**
 * First attempts go out straight from the reactor's delivery records, with no attempt state
 * written before them: a record is pending until its first attempt's outcome is recorded. These
 * cases cover the windows that opens: an attempt cut off before its state was recorded goes out
 * again from the next worker (same webhook-id), one whose state was recorded is never sent again
 * by a worker that starts later, and two workers sharing the stores send each delivery once.
 */
import { join } from 'node:path';
import { notificationsReactor } from '../../../src/notifications/reactors/notifications/reactor.js';
import { ALERT_SIGNAL_INCIDENT_LINKED, ALERT_SIGNAL_TRIGGERED } from '../../../src/alerting/domain/endpoint-alerts.js';
import { ATTEMPTS, DELIVERY_WORKER, RETRIES } from '../../../src/notifications/application/attempt-store.js';
import { DeliveryWorker } from '../../../src/notifications/application/delivery-worker.js';
import { Senders } from '../../../src/notifications/application/senders.js';
import { CHANNEL_CREATED, channelStream } from '../../../src/notifications/domain/channel.js';
import { CHANNELS, DELIVERIES, NOTIFICATIONS_VIEW } from '../../../src/notifications/reactors/notifications/view.js';
import { loadConfig } from '../../../src/platform/config/config.js';
import { silentLogger } from '../../../src/platform/logging/logger.js';
import { createPlatform, type Platform } from '../../../src/platform/platform.js';
import { newProcessIdentity } from '../../../src/platform/coordination/process-identity.js';
import { ProjectionRunner } from '../../../src/platform/projections/projection-runner.js';
import { physicalCollection } from '../../../src/platform/projections/registry.js';
import { makeTempDir } from '../../support/event-store-fixtures.js';
import { startReceiver, type Receiver } from '../../support/notification-receiver.js';
import { eventually } from '../../support/eventually.js';

/** The worker's collections, where the runner keeps them. */
const ATTEMPTS_COLLECTION = physicalCollection(DELIVERY_WORKER, 1, ATTEMPTS);
const RETRIES_COLLECTION = physicalCollection(DELIVERY_WORKER, 1, RETRIES);

const until = (what: string, done: () => Promise<boolean> | boolean, timeoutMs = 30_000) => eventually(what, done, { timeoutMs, intervalMs: 10 });

interface RunningWorker {
  worker: DeliveryWorker;
  stop(): Promise<void>;
}

function startWorker(platform: Platform, maxQueuedPerChannel?: number, retryScheduleMs?: number[]): Promise<RunningWorker> {
  const senders = new Senders({ blockPrivate: false, smtpUrl: null, emailFrom: 'test@localhost' });
  const worker = new DeliveryWorker(platform, senders, { pollMs: 20, maxQueuedPerChannel, retryScheduleMs });
  // Hosted as a process of its own hosts it: by a processor runner (with its own lease owner).
  const runner = new ProjectionRunner(platform.events, platform.views, [], { owner: newProcessIdentity(), logger: silentLogger, coordination: platform.coordination });
  return runner.host(worker).then(() => ({
    worker,
    stop: async () => {
      await runner.stop();
      await senders.close();
    },
  }));
}

describe('delivery worker: first attempts from the delivery records', () => {
  const dir = makeTempDir('delivery-worker-');
  let receiver: Receiver;
  const platforms: Platform[] = [];
  const workers: RunningWorker[] = [];
  let endpoint = 0;

  const open = async (): Promise<Platform> => {
    const config = loadConfig({ DATA_DIR: dir.path, ADMIN_TOKEN: 'delivery-worker-admin-token-0123456789', LOG_LEVEL: 'silent' });
    const platform = await createPlatform(config, { projections: [notificationsReactor], withRunner: true, withTransport: false, logger: silentLogger });
    await platform.runner!.start();
    platforms.push(platform);
    return platform;
  };
  const worker = async (platform: Platform, maxQueuedPerChannel?: number): Promise<RunningWorker> => {
    const running = await startWorker(platform, maxQueuedPerChannel);
    workers.push(running);
    return running;
  };
  // Each trigger with its incident link (alert.triggered is recorded once the link is seen).
  const trigger = (platform: Platform, count: number) =>
    platform.events.append(
      `checks-${endpoint}`,
      Array.from({ length: count }, () => [
        {
          type: ALERT_SIGNAL_TRIGGERED,
          data: { endpoint_id: ++endpoint, team_id: 1, project_id: 1, signal: 'availability', check_id: endpoint, at: new Date().toISOString() },
        },
        { type: ALERT_SIGNAL_INCIDENT_LINKED, data: { endpoint_id: endpoint, signal: 'availability', incident_id: endpoint } },
      ]).flat(),
      { expectedRevision: 'any' },
    );
  const ids = () => receiver.received.map((r) => String(r.headers['webhook-id']));
  const delivered = (platform: Platform) => platform.views.count(ATTEMPTS_COLLECTION, { state: 'delivered' });

  let platform: Platform;
  beforeAll(async () => {
    receiver = await startReceiver(204);
    platform = await open();
    const data = { channel_id: 1, team_id: 1, name: 'c1', kind: 'webhook', config: { url: `${receiver.url}/c1` }, secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`, events: null, project_ids: null, enabled: true, created_at: new Date().toISOString() };
    await platform.events.append(channelStream(1), [{ type: CHANNEL_CREATED, data }], { expectedRevision: 'no_stream' });
    await until('the channel in the view', async () => (await platform.reader.get(NOTIFICATIONS_VIEW, CHANNELS, 1)) !== null);
  });
  afterAll(async () => {
    for (const running of workers) await running.stop();
    for (const p of platforms) await p.close();
    await receiver.close();
    dir.remove();
  });

  it('a first attempt cut off before its outcome was recorded goes out again, with the same webhook-id', async () => {
    receiver.delayMs = 60_000; // the receiver holds the request: the attempt never completes
    const first = await worker(platform);
    await trigger(platform, 1);
    await until('the first attempt at the receiver', () => receiver.received.length === 1);
    await first.stop(); // cut off: nothing recorded for it

    receiver.delayMs = 0;
    await worker(platform);
    await until('the attempt again', () => receiver.received.length === 2);
    expect(ids()[1]).toBe(ids()[0]);
    await until('recorded delivered', async () => (await delivered(platform)) === 1);
  });

  it('a worker started later never sends again what an earlier one recorded', async () => {
    await trigger(platform, 20);
    await until('20 more delivered', async () => (await delivered(platform)) === 21);
    for (const running of workers.splice(0)) await running.stop();
    const before = receiver.received.length;

    // It scans the records after the intake cursor, which may lag behind what was recorded.
    await worker(platform);
    await trigger(platform, 1);
    await until('the new one delivered', async () => (await delivered(platform)) === 22);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received.length).toBe(before + 1);
    expect(new Set(ids()).size).toBe(22);
  });

  it('two workers sharing the stores (two processes) send each delivery once', async () => {
    const other = await open();
    await worker(other);
    const before = receiver.received.length;
    await trigger(platform, 60);
    await until('60 more delivered', async () => (await delivered(platform)) === 82);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received.length).toBe(before + 60);
    expect(new Set(ids()).size).toBe(82);
  });

  it('a backlog larger than a channel keeps in memory is read again from the records, in log order, each once', async () => {
    for (const running of workers.splice(0)) await running.stop();
    await worker(platform, 3);
    const before = receiver.received.length;
    const first = endpoint + 1;
    await trigger(platform, 40);
    await until('40 more delivered', async () => (await delivered(platform)) === 122);
    const sent = receiver.received.slice(before).map((r) => r.json.data.endpoint_id as number);
    expect(sent).toEqual(Array.from({ length: 40 }, (_, i) => first + i));
  });
});

describe('delivery worker: retries kept apart from settled states', () => {
  const dir = makeTempDir('delivery-retries-');
  let receiver: Receiver;
  let platform: Platform;
  let running: RunningWorker | null = null;
  let endpoint = 0;

  beforeAll(async () => {
    receiver = await startReceiver(204);
    const config = loadConfig({ DATA_DIR: dir.path, ADMIN_TOKEN: 'delivery-retries-admin-token-0123456789', LOG_LEVEL: 'silent' });
    platform = await createPlatform(config, { projections: [notificationsReactor], withRunner: true, withTransport: false, logger: silentLogger });
    await platform.runner!.start();
    const data = { channel_id: 1, team_id: 1, name: 'c1', kind: 'webhook', config: { url: `${receiver.url}/c1` }, secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`, events: null, project_ids: null, enabled: true, created_at: new Date().toISOString() };
    await platform.events.append(channelStream(1), [{ type: CHANNEL_CREATED, data }], { expectedRevision: 'no_stream' });
    await until('the channel in the view', async () => (await platform.reader.get(NOTIFICATIONS_VIEW, CHANNELS, 1)) !== null);
  });
  afterEach(async () => {
    await running?.stop();
    running = null;
  });
  afterAll(async () => {
    await platform.close();
    await receiver.close();
    dir.remove();
  });

  const start = async (retryScheduleMs: number[]) => {
    running = await startWorker(platform, undefined, retryScheduleMs);
  };
  const trigger = () =>
    platform.events.append(
      `checks-${++endpoint}`,
      [
        { type: ALERT_SIGNAL_TRIGGERED, data: { endpoint_id: endpoint, team_id: 1, project_id: 1, signal: 'availability', check_id: endpoint, at: new Date().toISOString() } },
        { type: ALERT_SIGNAL_INCIDENT_LINKED, data: { endpoint_id: endpoint, signal: 'availability', incident_id: endpoint } },
      ],
      { expectedRevision: 'any' },
    );
  const stateOf = async (attempts: number) => {
    let found: Record<string, unknown> | undefined;
    await until(`a state after attempt ${attempts}`, async () => {
      found = (await platform.views.find(ATTEMPTS_COLLECTION, { filter: { attempts } }))[0];
      return found !== undefined;
    });
    return found!;
  };

  it('drops a retry copy whose state is settled meanwhile, without sending it again', async () => {
    receiver.queue.push(500);
    await start([200]);
    await trigger();
    const failed = await stateOf(1).then(async (state) => (state.state === 'pending' ? state : stateOf(1)));
    await running!.stop();
    running = null;
    // Settled while the copy stayed (as a process of the version before retry copies left states).
    await platform.views.commit([{ op: 'put', collection: ATTEMPTS_COLLECTION, doc: { ...failed, id: String(failed.id), state: 'delivered', attempts: 2, next_attempt_ms: null } }]);
    const before = receiver.received.length;

    await start([200]);
    await until('the stale copy dropped', async () => (await platform.views.get(RETRIES_COLLECTION, String(failed.id))) === null);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received.length).toBe(before);
  });
});

describe('delivery worker: state carried over from where an earlier version kept it', () => {
  const dir = makeTempDir('delivery-adopt-');
  let receiver: Receiver;
  let platform: Platform;
  let running: RunningWorker | null = null;

  beforeAll(async () => {
    receiver = await startReceiver(204);
    const config = loadConfig({ DATA_DIR: dir.path, ADMIN_TOKEN: 'delivery-adopt-admin-token-0123456789', LOG_LEVEL: 'silent' });
    platform = await createPlatform(config, { projections: [notificationsReactor], withRunner: true, withTransport: false, logger: silentLogger });
    await platform.runner!.start();
    const data = { channel_id: 1, team_id: 1, name: 'c1', kind: 'webhook', config: { url: `${receiver.url}/c1` }, secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`, events: null, project_ids: null, enabled: true, created_at: new Date().toISOString() };
    await platform.events.append(channelStream(1), [{ type: CHANNEL_CREATED, data }], { expectedRevision: 'no_stream' });
    await until('the channel in the view', async () => (await platform.reader.get(NOTIFICATIONS_VIEW, CHANNELS, 1)) !== null);
  });
  afterAll(async () => {
    await running?.stop();
    await platform.close();
    await receiver.close();
    dir.remove();
  });

  it('takes over the attempt states, the pending retries and the intake cursor, and sends neither a settled delivery nor a retry before it is due', async () => {
    const signal = (endpoint: number) => [
      { type: ALERT_SIGNAL_TRIGGERED, data: { endpoint_id: endpoint, team_id: 1, project_id: 1, signal: 'availability', check_id: endpoint, at: new Date().toISOString() } },
      { type: ALERT_SIGNAL_INCIDENT_LINKED, data: { endpoint_id: endpoint, signal: 'availability', incident_id: endpoint } },
    ];
    await platform.events.append('checks-1', [...signal(1), ...signal(2), ...signal(3)], { expectedRevision: 'no_stream' });
    let records: Array<Record<string, unknown>> = [];
    await until('three delivery records', async () => (records = await platform.reader.find(NOTIFICATIONS_VIEW, DELIVERIES, { sort: [['position', 'asc']] })).length === 3);
    const [settled, retrying, due] = records;
    const state = (record: Record<string, unknown>, fields: Record<string, unknown>) => ({
      id: record.id, channel_id: 1, position: record.position, attempts: 1, last_status_code: 500, last_error: 'status: 500', delivered_at: null, updated_at: new Date().toISOString(), ...fields,
    });
    // As an earlier version left the store: its own collections, the first delivered, the second
    // waiting an hour, the third due now; its intake cursor past the first two; no retry copies made yet.
    await platform.views.ensureCollection({ name: 'notification_attempts', indexes: [] });
    await platform.views.commit([
      { op: 'put', collection: 'notification_attempts', doc: state(settled, { state: 'delivered', last_status_code: 204, last_error: null, next_attempt_ms: null }) as never },
      { op: 'put', collection: 'notification_attempts', doc: state(retrying, { state: 'pending', next_attempt_ms: Date.now() + 3_600_000 }) as never },
      { op: 'put', collection: 'notification_attempts', doc: state(due, { state: 'pending', next_attempt_ms: Date.now() }) as never },
      { op: 'put', collection: 'notification_attempts', doc: { id: '~intake', position: retrying.position as number, last_id: retrying.id as string } },
    ]);

    running = await startWorker(platform, undefined, [60_000]);

    await until('the due retry delivered', async () => (await platform.views.get(ATTEMPTS_COLLECTION, String(due.id)))?.state === 'delivered');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([due.id]);
    expect(await platform.views.get(ATTEMPTS_COLLECTION, String(retrying.id))).toMatchObject({ state: 'pending', attempts: 1 });
    expect(await platform.views.get(RETRIES_COLLECTION, String(retrying.id))).toMatchObject({ state: 'pending' });
    expect(await platform.views.listCollections()).not.toContain('notification_attempts');
    // Its checkpoint is in the runner's registry, and moves on once every record has a state.
    await until('the checkpoint past the records', async () => ((await platform.reader.position(DELIVERY_WORKER)) ?? -1) >= Number(due.position));
  });
});
