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

/** A request as the receiver got it: body and the headers the raw baseline sends again. */
interface Received {
  path: string;
  body: string;
  headers: Record<string, string>;
}

/** Headers of a received request that the raw baseline replays (the Standard Webhooks ones included). */
const REPLAYED_HEADERS = ['content-type', 'user-agent', 'webhook-id', 'webhook-timestamp', 'webhook-signature'];

interface Receiver {
  url: string;
  requests: Received[];
  /** receipt time (performance.now()) by endpoint id in the body */
  arrivals: Map<number, number>;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const receiver = { requests: [] as Received[], arrivals: new Map<number, number>() } as Receiver;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers: Record<string, string> = {};
      for (const name of REPLAYED_HEADERS) if (typeof req.headers[name] === 'string') headers[name] = req.headers[name] as string;
      receiver.requests.push({ path: req.url ?? '', body, headers });
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

/** The same requests (bodies and headers) POSTed straight with undici, `concurrency` at a time. */
async function rawPosts(url: string, requests: Received[], concurrency: number): Promise<Side> {
  const agent = new Agent({ connections: 4 });
  let next = 0;
  const side = measure();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests.length) {
        const { body, headers } = requests[next++];
        const response = await request(`${url}/raw`, { method: 'POST', body, headers, dispatcher: agent });
        await response.body.dump();
      }
    }),
  );
  const result = side.end(requests.length);
  await agent.close();
  return result;
}

/** Deliveries, wall time and CPU time (this process, receiver included) of one side. */
interface Side {
  count: number;
  ms: number;
  cpuUs: number;
}

function measure(): { end(count: number): Side } {
  const started = performance.now();
  const cpu = process.cpuUsage();
  return { end: (count) => ({ count, ms: performance.now() - started, cpuUs: cpuMicros(cpu) }) };
}

function add(a: Side, b: Side): Side {
  return { count: a.count + b.count, ms: a.ms + b.ms, cpuUs: a.cpuUs + b.cpuUs };
}

const perSecond = (side: Side) => side.count / (side.ms / 1000);
const cpuPerDelivery = (side: Side) => side.cpuUs / side.count;

/** CPU time of this process (receiver included) since `start`, in microseconds. */
function cpuMicros(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return used.user + used.system;
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
    const rounds = quick ? 2 : 4;
    const receiver = await startReceiver();
    const config = loadConfig({ DATA_DIR: workDir, ADMIN_TOKEN: 'bench-admin-token-0123456789', LOG_LEVEL: 'silent' });
    const platform = await createPlatform(config, { projections: [notificationsReactor], withRunner: true, withTransport: false, logger: silentLogger });
    await platform.runner!.start();
    const senders = new Senders({ blockPrivate: false, smtpUrl: null, emailFrom: 'bench@localhost' });
    const worker = new DeliveryWorker(platform, senders);
    await worker.start();
    const delivered = () => platform.views.count(ATTEMPTS_COLLECTION, { state: 'delivered' });
    try {
      // Throughput: every event fans out to every channel of the team. Rounds alternate with the
      // raw baseline, so that a change of the (shared) machine's load during the run weighs on
      // both sides alike.
      await createChannels(platform, 1, 1, channels, receiver.url);
      const total = events * channels;
      log(`${events} alert events x ${channels} channels = ${total} deliveries, in ${rounds} rounds alternating with the raw baseline`);
      let ours: Side = { count: 0, ms: 0, cpuUs: 0 };
      let raw: Side = { count: 0, ms: 0, cpuUs: 0 };
      const perRound = events / rounds;
      for (let round = 0; round < rounds; round++) {
        const before = receiver.requests.length;
        const side = measure();
        for (let i = round * perRound; i < (round + 1) * perRound; i += 50) {
          await platform.events.append(`checks-bench-${i}`, Array.from({ length: Math.min(50, (round + 1) * perRound - i) }, (_, k) => triggered(1, 1_000_000 + i + k)), { expectedRevision: 'any' });
        }
        // Watch the receiver (cheap) rather than query the store while the worker runs.
        await until('the round received', () => receiver.requests.length >= before + perRound * channels);
        ours = add(ours, side.end(perRound * channels));
        raw = add(raw, await rawPosts(receiver.url, receiver.requests.slice(before, before + perRound * channels), channels));
      }
      // Every attempt recorded delivered, and none sent twice.
      await until('all recorded delivered', async () => (await delivered()) >= total);
      const sent = receiver.requests.filter((r) => r.path !== '/raw');
      if (sent.length !== total || new Set(sent.map((r) => r.headers['webhook-id'])).size !== total) throw new Error(`expected ${total} deliveries with distinct webhook-ids, got ${sent.length}`);
      log(`CPU per delivery: ${cpuPerDelivery(ours).toFixed(0)} us (raw ${cpuPerDelivery(raw).toFixed(0)} us)`);

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
          { name: `deliveries/s (${channels} channels, reactor + worker, signed, attempt state recorded)`, value: perSecond(ours), unit: 'deliveries/s', baseline: { name: `raw undici POSTs of the same requests, ${channels} at a time`, value: perSecond(raw) }, aim: '>= 0.5' },
          { name: 'append-to-delivery delay p50', value: percentile(delays, 50), unit: 'ms' },
          { name: 'append-to-delivery delay p99', value: percentile(delays, 99), unit: 'ms' },
        ],
        notes: [
          'Each delivery: reactor record committed with its checkpoint, intake into the attempt collection, read under its channel lane\'s claim in the coordination store, the channel fold (cached), a Standard Webhooks signature, the POST with a 15 s deadline through the address-guarded agent, the attempt state committed (fenced; many deliveries\' states in one commit). One lane per channel: concurrency equals the channel count on both sides, 4 sockets per origin on both sides.',
          `Baseline: the very requests the receiver got (bodies and headers, Standard Webhooks ones included) POSTed again with undici. ${rounds} rounds alternate with it, so that the load of the shared machine weighs on both sides alike; the receiver runs in this process for both (out of process it would take its CPU off both sides and leave the raw side bound by round trips instead). The rate of the worker counts from the first append to the last receipt of each round, so it includes the reactor and intake.`,
          `CPU time of this process per delivery (receiver included): ${cpuPerDelivery(ours).toFixed(0)} us against ${cpuPerDelivery(raw).toFixed(0)} us raw (${(cpuPerDelivery(raw) / cpuPerDelivery(ours)).toFixed(2)} by CPU time): with both sides short of CPU on a shared machine, the ratio follows the CPU each delivery takes. Where the rest goes (cpu profile of 8,000 deliveries): undici and the receiver about half, the SQLite work (the reactor's record with its checkpoint, the intake's pending state, the lane's page reads and the state commits, better-sqlite3 being synchronous) about a quarter, the channel fold read before each send (so a deleted channel's attempts are cancelled, not sent) and garbage collection most of the rest.`,
          'Changed for this figure (it was 0.219, the worker spending about 4.5 times the raw CPU per delivery): attempt states are committed many at a time (one commit per attempt cost about 0.35 ms, a commit of 30 states about 0.05 ms a state; committing once per event-loop turn gave batches of one or two, so states wait up to 10 ms for company, the lane not waiting for them before its next send); the signature uses node:crypto instead of the pure-JS HMAC of the standardwebhooks package; the deadline is an EventEmitter signal and one timer instead of an AbortController; channel URLs are parsed once. The sender now costs about what the raw loop costs (within 15% in a send-only loop); the rest of the gap is the worker\'s store work and its lanes. Not tried, as it cannot help here: several attempts in flight per lane (no CPU headroom is gained, and 4 sockets per origin cap what is on the wire on both sides). The lanes keep up with what the reactor and the intake hand them (in the 8,000-delivery run about 230 lanes start and drain, each costing a claim, a page read and a grouped read of all due attempts), so the stages before them weigh as much: left to try are sending from the reactor\'s records without the intake\'s second write of each delivery, and taking the SQLite writes off the event loop (a store change).',
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
