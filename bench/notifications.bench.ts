/**
 * Notification delivery: deliveries/s from the log to a local webhook receiver, against raw
 * undici POSTs of the same bodies with the same concurrency in the same run; and the delay from
 * an event's append to its delivery (p50, p99), one event at a time.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { notificationsReactor } from '../src/notifications/reactors/notifications/reactor.js';
import { ALERT_SIGNAL_INCIDENT_LINKED, ALERT_SIGNAL_TRIGGERED } from '../src/alerting/domain/endpoint-alerts.js';
import { ATTEMPTS, DELIVERY_WORKER } from '../src/notifications/application/attempt-store.js';
import { DeliveryWorker } from '../src/notifications/application/delivery-worker.js';
import { Senders } from '../src/notifications/application/senders.js';
import { CHANNEL_CREATED, channelStream } from '../src/notifications/domain/channel.js';
import { loadConfig } from '../src/platform/config/config.js';
import { silentLogger } from '../src/platform/logging/logger.js';
import { createPlatform, type Platform } from '../src/platform/platform.js';
import { CHANNELS, NOTIFICATIONS_VIEW } from '../src/notifications/reactors/notifications/view.js';
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

/** A trigger and its incident link: alert.triggered is recorded once the link is seen. */
const triggered = (teamId: number, endpointId: number) => [
  {
    type: ALERT_SIGNAL_TRIGGERED,
    data: { endpoint_id: endpointId, team_id: teamId, project_id: 1, signal: 'availability', check_id: endpointId, at: new Date().toISOString() },
  },
  { type: ALERT_SIGNAL_INCIDENT_LINKED, data: { endpoint_id: endpointId, signal: 'availability', incident_id: endpointId } },
];

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
    const perRound = quick ? 250 : 500;
    const singles = quick ? 50 : 200;
    const rounds = quick ? 2 : 4;
    const receiver = await startReceiver();
    const config = loadConfig({ DATA_DIR: workDir, ADMIN_TOKEN: 'bench-admin-token-0123456789', LOG_LEVEL: 'silent' });
    const platform = await createPlatform(config, { projections: [notificationsReactor], withRunner: true, withTransport: false, logger: silentLogger });
    await platform.runner!.start();
    const senders = new Senders({ blockPrivate: false, smtpUrl: null, emailFrom: 'bench@localhost' });
    const worker = new DeliveryWorker(platform, senders);
    await platform.runner!.host(worker);
    const delivered = () => platform.reader.count(DELIVERY_WORKER, ATTEMPTS, { state: 'delivered' });
    try {
      // Throughput: every event fans out to every channel of the team. Rounds alternate with the
      // raw baseline, so that a change of the (shared) machine's load during the run weighs on
      // both sides alike.
      await createChannels(platform, 1, 1, channels, receiver.url);
      const total = (rounds + 1) * perRound * channels;
      log(`${perRound} alert events x ${channels} channels per round: a warm-up round, then ${rounds} rounds alternating with the raw baseline`);
      let endpointId = 1_000_000;
      const oneRound = async () => {
        const before = receiver.requests.length;
        const side = measure();
        for (let i = 0; i < perRound; i += 50) {
          const events = Array.from({ length: Math.min(50, perRound - i) }, () => triggered(1, endpointId++)).flat();
          await platform.events.append(`checks-bench-${endpointId}`, events, { expectedRevision: 'any' });
        }
        // Watch the receiver (cheap) rather than query the store while the worker runs.
        await until('the round received', () => receiver.requests.length >= before + perRound * channels);
        const ourSide = side.end(perRound * channels);
        return { ours: ourSide, raw: await rawPosts(receiver.url, receiver.requests.slice(before, before + perRound * channels), channels) };
      };
      // The first round of a process pays for compiling both paths (ours is longer, so it pays
      // more): it is reported apart, and the figure is the steady state a running service sees.
      const cold = await oneRound();
      let ours: Side = { count: 0, ms: 0, cpuUs: 0 };
      let raw: Side = { count: 0, ms: 0, cpuUs: 0 };
      for (let round = 0; round < rounds; round++) {
        const measured = await oneRound();
        ours = add(ours, measured.ours);
        raw = add(raw, measured.raw);
      }
      // Every attempt recorded delivered, and none sent twice.
      await until('all recorded delivered', async () => (await delivered()) >= total);
      const sent = receiver.requests.filter((r) => r.path !== '/raw');
      if (sent.length !== total || new Set(sent.map((r) => r.headers['webhook-id'])).size !== total) throw new Error(`expected ${total} deliveries with distinct webhook-ids, got ${sent.length}`);
      log(`CPU per delivery: ${cpuPerDelivery(ours).toFixed(0)} us (raw ${cpuPerDelivery(raw).toFixed(0)} us); first round ${(perSecond(cold.ours) / perSecond(cold.raw)).toFixed(3)} of raw`);

      // Delay: one event at a time to one channel of another team.
      await createChannels(platform, 2, channels + 1, 1, receiver.url);
      await until('the channel in the view', async () => (await platform.reader.get(NOTIFICATIONS_VIEW, CHANNELS, channels + 1)) !== null);
      const delays: number[] = [];
      for (let i = 0; i < singles; i++) {
        const endpointId = 2_000_000 + i;
        await platform.events.append(`checks-single-${i}`, triggered(2, endpointId), { expectedRevision: 'any' });
        const appended = performance.now();
        await until('the single delivery', () => receiver.arrivals.has(endpointId), 30_000);
        delays.push(receiver.arrivals.get(endpointId)! - appended);
      }
      delays.sort((a, b) => a - b);
      return {
        title: 'Notification delivery to a local webhook receiver (SQLite, one process)',
        figures: [
          { name: `deliveries/s (${channels} channels, reactor + worker, signed, attempt state recorded), after the warm-up round`, value: perSecond(ours), unit: 'deliveries/s', baseline: { name: `raw undici POSTs of the same requests, ${channels} at a time`, value: perSecond(raw) }, aim: '>= 0.5' },
          { name: `deliveries/s in the process's first round (cold: both paths still being compiled)`, value: perSecond(cold.ours), unit: 'deliveries/s', baseline: { name: 'raw undici POSTs of that round\'s requests', value: perSecond(cold.raw) } },
          { name: 'CPU time per delivery, after the warm-up round (receiver included)', value: cpuPerDelivery(ours), unit: 'us', baseline: { name: 'raw undici POSTs', value: cpuPerDelivery(raw) } },
          { name: 'append-to-delivery delay p50', value: percentile(delays, 50), unit: 'ms' },
          { name: 'append-to-delivery delay p99', value: percentile(delays, 99), unit: 'ms' },
        ],
        notes: [
          'Each delivery: the reactor\'s record committed with its checkpoint; read by the worker\'s scan of new records; checked under its channel lane\'s claim in the coordination store to have no attempt state yet; the channel fold (cached; a read past the stream\'s known end costs no query); a Standard Webhooks signature; the POST with a 15 s deadline through the address-guarded agent (undici\'s dispatcher API); its first attempt state committed, fenced on there being none, many deliveries\' states in one commit. One lane per channel: concurrency equals the channel count on both sides, 4 sockets per origin on both sides.',
          `Baseline: the very requests the receiver got (bodies and headers, Standard Webhooks ones included) POSTed again with undici's \`request\`, in the same process, right after each round of ours. A warm-up round runs first and is reported apart (second figure); then ${rounds} rounds of ${perRound * channels} deliveries alternate with the baseline, so that the load of the shared machine weighs on both sides alike. The receiver runs in this process for both sides. The rate of the worker counts from the first append to the last receipt of each round, so it includes the reactor and the worker's scan.`,
          'With both sides short of CPU, the rate follows the CPU each delivery takes (third figure). Raw, about half of it is the two socket writes of each exchange (client and receiver); ours adds two SQLite documents per delivery (the reactor\'s record and the attempt state), their reads, and the pipeline\'s promises and garbage.',
          `Delay: ${singles} events appended one at a time, measured from the append's return to the receiver's receipt (the worker is woken by the runner in the same process; another process would find work on its 250 ms poll).`,
          'Run length matters: the full run (8 channels, rounds of 4,000 after a warm-up of 4,000) gave 0.49-0.60 in seven runs on a quiet machine on 2026-11-26 (median 0.56); `--quick` (4 channels, rounds of 1,000 after a warm-up of 1,000) gave 0.42-0.49, and 4 channels with rounds of 2,000-4,000 gave 0.46-0.52: shorter rounds measure our longer path while V8 is still optimising it, and with fewer lanes less of the pipeline overlaps (its commits and page reads are shared by fewer deliveries). Before and after this wave\'s changes, measured with this same module: docs/benchmarks.md, "Notification delivery before and after".',
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
