/**
 * Leases across real processes that disagree about the time or share an identity that used to
 * look like the same process: two production-build service processes (ROLE=all) share one
 * DATA_DIR and one NATS server.
 *
 * 1. The second runs under Debian's `faketime` two minutes ahead. It must not take any lease the
 *    first holds (before, it took every one of them at once: it compared its own clock with the
 *    expiries the first wrote), every due slot of every endpoint is probed exactly once, and
 *    every notification reaches the receiver once (both processes' delivery workers contend for
 *    the channel's claim).
 * 2. Both run as PID 1 of their own PID namespace (`unshare`) with the same hostname, as two
 *    containers on one host. The second must not take the first's leases (before, a holder
 *    with this host and PID counted as a dead earlier self).
 */
import { jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { SqliteCoordinationStore } from '../../src/platform/coordination/sqlite/sqlite-coordination-store.js';
import { upcasters } from '../../src/app/contexts.js';
import { createEventStore } from '../../src/platform/event-store/create-event-store.js';
import { withUpcasting } from '../../src/platform/event-store/upcasting.js';
import { describeWithNats, startNatsServer, type TestNatsServer } from '../support/nats-server.js';
import { buildService, callService, startService, type ServiceBuild, type ServiceProcess } from '../support/service-process.js';
import { startReceiver, type Receiver } from '../support/notification-receiver.js';
import { faketimeAhead, killDescendants, ownPidNamespace } from '../support/wrapped-process.js';
import { configuration, eventually, startTarget, type Target } from './support.js';

jest.setTimeout(180_000);

const ADMIN = 'lease-skew-admin-token-0123456789';
const AHEAD_S = 120;
const INTERVAL_S = 2;
const ENDPOINTS = 4;
/** How long both processes run together: several lease renewals (every 5 s) and many slots. */
const TOGETHER_MS = 30_000;

const skewed = faketimeAhead(AHEAD_S);
const namespaced = ownPidNamespace();

/**
 * Leases processes contend for: not per-channel claims (taken and freed by every delivery lane)
 * nor a prober's region announcement (each process holds its own).
 */
const isLease = (name: string) => !name.startsWith('notification-channel:') && !name.startsWith('prober-region:');

/** `monitor_lease_acquisitions_total` of one process, by lease label. */
async function acquisitions(service: ServiceProcess): Promise<Map<string, number>> {
  const text = await (await fetch(`${service.url}/metrics`)).text();
  const family = parsePrometheusTextFormat(text).find((f) => f.name === 'monitor_lease_acquisitions_total');
  return new Map((family?.metrics ?? []).map((sample: any) => [sample.labels.lease as string, Number(sample.value)]));
}

const leasesTaken = (counts: Map<string, number>) => [...counts].filter(([lease]) => isLease(`${lease}:`)).reduce((sum, [, n]) => sum + n, 0);

describeWithNats('leases across processes sharing DATA_DIR', () => {
  let build: ServiceBuild;
  let nats: TestNatsServer | null = null;
  let target: Target;
  let receiver: Receiver;
  let dataDir: string;
  const running: ServiceProcess[] = [];

  beforeAll(async () => {
    build = await buildService('lease-skew');
    nats = await startNatsServer();
    target = await startTarget();
    receiver = await startReceiver();
  });
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'lease-skew-'));
  });
  afterEach(async () => {
    for (const service of running.splice(0)) {
      killDescendants(service.child.pid!);
      await service.kill();
    }
    rmSync(dataDir, { recursive: true, force: true });
  });
  afterAll(async () => {
    await target?.close();
    await receiver?.close();
    await nats?.stop();
    build?.remove();
  });

  /** Who holds each lease now, with its epoch, read from the shared coordination file. */
  async function holders(): Promise<Map<string, string>> {
    const store = new SqliteCoordinationStore(join(dataDir, 'coordination.sqlite'));
    try {
      return new Map((await store.listLeases()).filter((lease) => isLease(lease.name)).map((lease) => [lease.name, `${lease.owner}#${lease.epoch}`]));
    } finally {
      await store.close();
    }
  }

  async function start(wrap: string[] = []): Promise<ServiceProcess> {
    const service = await startService(build, { DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN, NATS_URL: nats!.url }, wrap);
    running.push(service);
    await service.ready();
    return service;
  }

  (skewed ? it : it.skip)(
    `${skewed ? '' : '(skipped: faketime is not installed or does not move Node\'s clock) '}a second process two minutes ahead takes no lease from the first, every due slot is probed once and every notification received once`,
    async () => {
      const first = await start();
      const team = (await callService(first, 'POST', '/api/v2/teams', ADMIN, { name: 'Skew' })).body.data;
      const endpoints: number[] = [];
      for (let i = 0; i < ENDPOINTS; i++) {
        const project = (await callService(first, 'POST', `/api/v2/teams/${team.id}/projects`, ADMIN, { name: `P${i}`, description: '' })).body.data;
        const created = await callService(first, 'POST', `/api/v2/teams/${team.id}/endpoints`, ADMIN, {
          project_id: project.id,
          name: `Target ${i}`,
          ...configuration(`${target.url}/health`, { interval_seconds: INTERVAL_S, timeout_seconds: 1 }),
        });
        expect(created.status).toBe(201);
        target.tokens.set(created.body.data.id, created.body.data.verification_token);
        expect((await callService(first, 'POST', `/api/v2/teams/${team.id}/endpoints/${created.body.data.id}/verify-destination`, ADMIN)).status).toBe(200);
        expect((await callService(first, 'PATCH', `/api/v2/teams/${team.id}/endpoints/${created.body.data.id}`, ADMIN, { enabled: true })).status).toBe(200);
        endpoints.push(created.body.data.id);
      }
      const editor = (await callService(first, 'POST', `/api/v2/teams/${team.id}/tokens`, ADMIN, { name: 'e', scopes: ['incidents:read', 'incidents:write'], role: 'editor' })).body.data.token;
      const project = (await callService(first, 'POST', `/api/v2/teams/${team.id}/projects`, ADMIN, { name: 'Incidents', description: '' })).body.data;
      expect((await callService(first, 'POST', `/api/v2/teams/${team.id}/notification-channels`, ADMIN, { name: 'Ops', kind: 'webhook', config: { url: `${receiver.url}/ops` } })).status).toBe(201);
      const held = await eventually('the first process to hold the scheduler shards', async () => {
        const now = await holders();
        return [...now.keys()].filter((name) => name.startsWith('scheduler-shard-')).length === 16 ? now : null;
      });

      const second = await start(skewed!);
      // The second process's clock really is two minutes ahead (Node stamps each answer's Date header).
      const stamped = Date.parse((await fetch(`${second.url}/health/live`)).headers.get('date')!);
      expect(stamped - Date.now()).toBeGreaterThan((AHEAD_S - 10) * 1000);
      const from = Date.now();
      const takenBefore = leasesTaken(await acquisitions(first));
      // Meanwhile incidents are opened through either process: each is notified to the channel.
      const opened: number[] = [];
      for (let i = 0; Date.now() - from < TOGETHER_MS; i++) {
        const incident = await callService(i % 2 ? second : first, 'POST', '/api/public/v2/incidents', editor, { project_id: project.id, title: `Incident ${i}` });
        expect(incident.status).toBe(201);
        opened.push(incident.body.data.id);
        await new Promise((resolve) => setTimeout(resolve, 2_000));
      }
      const until = Date.now() - 5_000; // slots due later may still be on their way

      // No lease changed hands: same holders, same epochs; the second took none, the first none again.
      expect(await holders()).toEqual(held);
      expect(leasesTaken(await acquisitions(second))).toBe(0);
      expect(leasesTaken(await acquisitions(first))).toBe(takenBefore);

      // Every incident was notified, each delivery received once (receivers tell deliveries apart by webhook-id).
      const notified = () => new Set(receiver.of('incident.opened').map((r) => r.json.data.incident.id as number));
      await eventually('every incident notified', async () => opened.every((id) => notified().has(id)), 30_000);
      await new Promise((resolve) => setTimeout(resolve, 3_000)); // a second send would come now
      const ids = receiver.received.map((r) => String(r.headers['webhook-id']));
      expect(ids.length - new Set(ids).size).toBe(0);
      // Exactly the incidents opened here, each once. Only those of their project count: on a
      // loaded host a check of a target may time out and open an automatic incident elsewhere.
      const openedHere = receiver.of('incident.opened').map((r) => r.json.data.incident).filter((incident: { project_id: number }) => incident.project_id === project.id);
      expect(openedHere.map((incident: { id: number }) => incident.id).sort((x: number, y: number) => x - y)).toEqual([...opened].sort((x, y) => x - y));

      // Every due slot from the second's start on was probed once: one scheduled check per slot, no gap.
      // Read as the service does: a check's stored form keeps a scheduled job id as its lag.
      const events = withUpcasting(createEventStore({ dataDir, eventStoreUrl: null }), upcasters());
      try {
        const slots = new Map<number, number[]>(endpoints.map((id) => [id, []]));
        for (let after: number | null = null; ; ) {
          const page = await events.readAll({ after, maxCount: 1000 });
          for (const event of page) {
            const data = event.data as { endpoint_id: number; job_id?: string | null; source?: string };
            if (event.type !== 'CheckRecorded' || (data.source ?? 'scheduled') !== 'scheduled' || !data.job_id) continue;
            slots.get(data.endpoint_id)?.push(Number(data.job_id.split(':')[1]));
          }
          if (page.length < 1000) break;
          after = page[page.length - 1].position;
        }
        for (const [id, dueTimes] of slots) {
          const inWindow = dueTimes.filter((due) => due >= from && due <= until).sort((x, y) => x - y);
          expect({ endpoint: id, duplicates: inWindow.length - new Set(inWindow).size }).toEqual({ endpoint: id, duplicates: 0 });
          const gaps = inWindow.slice(1).filter((due, i) => due - inWindow[i] !== INTERVAL_S * 1000);
          expect({ endpoint: id, gaps }).toEqual({ endpoint: id, gaps: [] });
          expect(inWindow.length).toBeGreaterThanOrEqual(Math.floor((until - from) / (INTERVAL_S * 1000)) - 1);
        }
      } finally {
        await events.close();
      }
    },
  );

  (namespaced ? it : it.skip)(
    `${namespaced ? '' : '(skipped: unshare cannot make a PID namespace here) '}a second PID 1 with the same hostname takes no lease from a live first one`,
    async () => {
      const first = await start(namespaced!);
      const held = await eventually('the first process to hold its leases', async () => {
        const now = await holders();
        return [...now.keys()].some((name) => name.startsWith('scheduler-shard-')) ? now : null;
      });
      // Both are PID 1 on this host: their lease identities name the same host and PID.
      expect([...new Set([...held.values()].map((owner) => owner.split(':').slice(0, 2).join(':')))]).toEqual([`${hostname()}:1`]);

      const second = await start(namespaced!);
      await new Promise((resolve) => setTimeout(resolve, 12_000)); // two renewal periods and more
      expect(await holders()).toEqual(held);
      expect(leasesTaken(await acquisitions(second))).toBe(0);
    },
  );
});
