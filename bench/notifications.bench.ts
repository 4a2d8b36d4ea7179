/**
 * Notification delivery: deliveries/s from the log to a local webhook receiver, against raw
 * undici POSTs of the same bodies with the same concurrency in the same run; and the delay from
 * an event's append to its delivery (p50, p99), one event at a time.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { notificationsReactor } from '../projections/notifications.js';
import { ALERT_SIGNAL_TRIGGERED } from '../src/alerting/domain/endpoint-alerts.js';
import { ATTEMPTS_COLLECTION } from '../src/notifications/application/attempt-store.js';
import { DeliveryWorker } from '../src/notifications/application/delivery-worker.js';
import { Senders } from '../src/notifications/application/senders.js';
import { CHANNEL_CREATED, channelStream } from '../src/notifications/domain/channel.js';
import { loadConfig } from '../src/platform/config/config.js';
import { silentLogger } from '../src/platform/logging/logger.js';
import { createPlatform, type Platform } from '../src/platform/platform.js';
import { CHANNELS, NOTIFICATIONS_VIEW } from '../src/notifications/domain/views.js';
import type { BenchModule } from './bench.js';

interface Receiver {
  url: string;
  bodies: string[];
  /** receipt time (performance.now()) by endpoint id in the body */
  arrivals: Map<number, number>;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const receiver = { bodies: [] as string[], arrivals: new Map<number, number>() } as Receiver;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      receiver.bodies.push(body);
      const endpoint = /"endpoint_id":(\d+)/.exec(body);
      if (endpoint) receiver.arrivals.set(Number(endpoint[1]), performance.now());
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); });
  return receiver;
}

const triggered = (teamId: number, endpointId: number) => ({
  type: ALERT_SIGNAL_TRIGGERED,
  data: { endpoint_id: endpointId, team_id: teamId, project_id: 1, signal: 'availability', check_id: endpointId, at: new Date().toISOString() },
});

async function createChannels(platform: Platform, teamId: number, first: number, count: number, url: string): Promise<void> {
  for (let id = first; id < first + count; id++) {
    const data = { channel_id: id, team_id: teamId, name: `c${id}`, kind: 'webhook', config: { url: `${url}/c${id}` }, secret: `whsec_${Buffer.alloc(32, id).toString('base64')}`, events: null, project_ids: null, enabled: true, created_at: new Date().toISOString() };
    await platform.events.append(channelStream(id), [{ type: CHANNEL_CREATED, data }], { expectedRevision: 'no_stream' });
  }
}

async function until(what: string, done: () => Promise<boolean> | boolean, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** The same bodies POSTed straight with undici, `concurrency` at a time. */
async function rawPosts(url: string, bodies: string[], concurrency: number): Promise<number> {
  const agent = new Agent({ connections: 4 });
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++];
        const response = await request(`${url}/raw`, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: agent });
        await response.body.dump();
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await agent.close();
  return bodies.length / seconds;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

const bench: BenchModule = {
  name: 'notifications',
  async run({ quick, workDir, log }) {
    const channels = Number(process.env.BENCH_CHANNELS ?? (quick ? 4 : 8));
    const events = quick ? 250 : 1000;
    const singles = quick ? 50 : 200;
    const receiver = await startReceiver();
    const config = loadConfig({ DATA_DIR: workDir, ADMIN_TOKEN: 'bench-admin-token-0123456789', LOG_LEVEL: 'silent' });
    const platform = await createPlatform(config, { projections: [notificationsReactor], withRunner: true, withTransport: false, logger: silentLogger });
    await platform.runner!.start();
    const senders = new Senders({ blockPrivate: false, smtpUrl: null, emailFrom: 'bench@localhost' });
    const worker = new DeliveryWorker(platform, senders);
    await worker.start();
    const delivered = () => platform.views.count(ATTEMPTS_COLLECTION, { state: 'delivered' });
    try {
      // Throughput: every event fans out to every channel of the team.
      await createChannels(platform, 1, 1, channels, receiver.url);
      const total = events * channels;
      log(`${events} alert events x ${channels} channels = ${total} deliveries`);
      const started = performance.now();
      for (let i = 0; i < events; i += 50) {
        await platform.events.append(`checks-bench-${i}`, Array.from({ length: Math.min(50, events - i) }, (_, k) => triggered(1, 1_000_000 + i + k)), { expectedRevision: 'any' });
      }
      // Watch the receiver (cheap) rather than query the store while the worker runs; then check
      // that every attempt was recorded delivered.
      await until('all received', () => receiver.bodies.length >= total);
      const rate = total / ((performance.now() - started) / 1000);
      await until('all recorded delivered', async () => (await delivered()) >= total);
      const bodies = receiver.bodies.slice(0, total);
      log('raw undici POSTs of the same bodies');
      const raw = await rawPosts(receiver.url, bodies, channels);

      // Delay: one event at a time to one channel of another team.
      await createChannels(platform, 2, channels + 1, 1, receiver.url);
      await until('the channel in the view', async () => (await platform.reader.get(NOTIFICATIONS_VIEW, CHANNELS, channels + 1)) !== null);
      const delays: number[] = [];
      for (let i = 0; i < singles; i++) {
        const endpointId = 2_000_000 + i;
        await platform.events.append(`checks-single-${i}`, [triggered(2, endpointId)], { expectedRevision: 'any' });
        const appended = performance.now();
        await until('the single delivery', () => receiver.arrivals.has(endpointId), 30_000);
        delays.push(receiver.arrivals.get(endpointId)! - appended);
      }
      delays.sort((a, b) => a - b);
      return {
        title: 'Notification delivery to a local webhook receiver (SQLite, one process)',
        figures: [
          { name: `deliveries/s (${channels} channels, reactor + worker, signed, attempt state recorded)`, value: rate, unit: 'deliveries/s', baseline: { name: `raw undici POSTs of the same bodies, ${channels} at a time`, value: raw }, aim: '>= 0.5' },
          { name: 'append-to-delivery delay p50', value: percentile(delays, 50), unit: 'ms' },
          { name: 'append-to-delivery delay p99', value: percentile(delays, 99), unit: 'ms' },
        ],
        notes: [
          'Each delivery: reactor record committed with its checkpoint, intake into the attempt collection, read under its channel lane\'s claim in the coordination store, the channel fold (cached), a Standard Webhooks signature, the POST with a 15 s deadline through the address-guarded agent, the attempt state written (fenced). One lane per channel: concurrency equals the channel count on both sides.',
          'Aim not met: the worker and the receiver share one event loop, and per delivery the worker spends about 1 ms committing the attempt state (SQLite read store, two JSON indexes and collection stamps) and about 2 ms in the signed, deadline-bound undici request where the raw loop spends about 0.3 ms; the store work is on the event loop (better-sqlite3 is synchronous). Committing the states of concurrent lanes together (one transaction per event-loop turn) was tried and changed nothing measurable, so it was left out. Next to try: run the receiver out of process in the bench, and take the SQLite writes off the event loop.',
          `Delay: ${singles} events appended one at a time, measured from the append's return to the receiver's receipt (the worker is woken by the runner in the same process; another process would find work on its 250 ms poll).`,
        ],
      };
    } finally {
      await worker.stop();
      await senders.close();
      await platform.close();
      await receiver.close();
    }
  },
};

export default bench;
