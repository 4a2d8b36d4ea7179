import { jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { configuration, monitorTarget, registerEndpoint, startTarget, type Target } from '../e2e/support.js';

jest.setTimeout(60_000);

describe('the region a check was taken from (PROBE_REGION)', () => {
  let t: TestApp;
  let target: Target;
  beforeAll(async () => {
    target = await startTarget();
    t = await startTestApp({ PROBE_REGION: 'eu-west' });
  });
  afterAll(async () => {
    await t.close();
    await target.close();
  });

  async function verifiedEndpoint(overrides: Parameters<typeof configuration>[1] = {}) {
    const team = await t.createTeam();
    const { token } = await t.issueToken(team.id, ['monitoring:read']);
    const endpoint = await monitorTarget(t, team.id, target, 'regions', overrides, { enabled: false });
    return { team, token, endpoint };
  }

  it('sends X-Probe-Region, records the region on the check and filters the check list by ?region=', async () => {
    const { team, token, endpoint } = await verifiedEndpoint();
    const before = target.regions.length;
    const manual = await t.admin('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/checks`);
    expect(manual.statusCode).toBe(201);
    expect(target.regions.slice(before)).toEqual(['eu-west']);

    const list = async (query: string) => {
      const response = await t.request('GET', `/api/public/v2/endpoints/${endpoint.id}/checks${query}`, { token });
      expect(response.statusCode).toBe(200);
      return response.json().data as Array<{ id: number; region: string }>;
    };
    const all = await list('');
    expect(all).toHaveLength(1);
    expect(all[0].region).toBe('eu-west');
    const one = await t.request('GET', `/api/public/v2/endpoints/${endpoint.id}/checks/${all[0].id}`, { token });
    expect(one.json().data.region).toBe('eu-west');
    expect((await list('?region=eu-west')).map((check) => check.id)).toEqual([all[0].id]);
    expect(await list('?region=local')).toEqual([]);
    // An unknown region is an empty list, not an error.
    expect(await list('?region=nowhere')).toEqual([]);
    expect(await list('?region=Not%20A%20Region')).toEqual([]);

    const metrics = (await t.request('GET', '/metrics')).body;
    expect(metrics).toMatch(/^monitor_checks_by_region_total\{region="eu-west",result="up"[^}]*\} [1-9]/m);
  });

  it('lists the regions with their probers and the regions endpoints name, warning of one no prober serves', async () => {
    const team = await t.createTeam();
    await registerEndpoint(t, team.id, { ...configuration(`${target.url}/named`), regions: ['eu-west', 'nowhere'] } as Parameters<typeof registerEndpoint>[2]);
    const response = await t.admin('GET', '/api/v2/regions');
    expect(response.statusCode).toBe(200);
    const data = response.json().data as Array<{ name: string; probers: number; last_seen_at: string | null; endpoints: number; warning: string | null }>;
    const byName = new Map(data.map((region) => [region.name, region]));
    expect(byName.get('eu-west')).toMatchObject({ probers: 1, warning: null });
    expect(byName.get('eu-west')!.endpoints).toBeGreaterThanOrEqual(1);
    expect(Date.parse(byName.get('eu-west')!.last_seen_at!)).toBeGreaterThan(Date.now() - 60_000);
    expect(byName.get('nowhere')).toMatchObject({ probers: 0, last_seen_at: null, endpoints: 1 });
    expect(byName.get('nowhere')!.warning).toMatch(/No prober serves this region/);
    expect(data.map((region) => region.name)).toEqual([...data.map((region) => region.name)].sort());
    expect((await t.request('GET', '/api/v2/regions')).statusCode).toBe(401);
  });

  it('lets an endpoint that configures X-Probe-Region itself send its own value', async () => {
    const { team, endpoint } = await verifiedEndpoint({ headers: { 'X-Probe-Region': 'configured' } });
    const before = target.regions.length;
    expect((await t.admin('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/checks`)).statusCode).toBe(201);
    expect(target.regions.slice(before)).toEqual(['configured']);
  });
});

describe('a process without PROBE_REGION', () => {
  let t: TestApp;
  let target: Target;
  beforeAll(async () => {
    target = await startTarget();
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
    await target.close();
  });

  it('probes as region local, and ?region=local lists its checks', async () => {
    const team = await t.createTeam();
    const { token } = await t.issueToken(team.id, ['monitoring:read']);
    const endpoint = await monitorTarget(t, team.id, target, 'local', {}, { enabled: false });
    const before = target.regions.length;
    expect((await t.admin('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/checks`)).statusCode).toBe(201);
    expect(target.regions.slice(before)).toEqual(['local']);
    const listed = await t.request('GET', `/api/public/v2/endpoints/${endpoint.id}/checks?region=local`, { token });
    expect(listed.json().data.map((check: { region: string }) => check.region)).toEqual(['local']);
  });
});

describe('prober announcements across prober starts', () => {
  let dataDir: string;
  let t: TestApp | null = null;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'announcements-'));
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const announcementRows = () => {
    const db = new Database(join(dataDir, 'coordination.sqlite'));
    try {
      return (db.prepare(`SELECT name FROM leases WHERE name LIKE 'prober-region:%' ORDER BY name`).all() as Array<{ name: string }>).map((row) => row.name);
    } finally {
      db.close();
    }
  };

  it('lists the running prober and one killed within the horizon, and keeps no row of probers stopped or gone longer', async () => {
    // Three clean starts and stops: each left its released announcement behind.
    for (let i = 0; i < 3; i++) await (await startTestApp({ DATA_DIR: dataDir, PROBE_REGION: 'eu-west' })).close();
    // Two probers killed elsewhere, their rows as their last renewal left them: a minute ago, and two days ago.
    const killed = (region: string, agoMs: number) => {
      const owner = `elsewhere:1:${randomBytes(8).toString('hex')}`;
      return { name: `prober-region:${region}:${owner}`, owner, renewedAt: Date.now() - agoMs };
    };
    const recent = killed('us-east', 60_000);
    const old = killed('ap-south', 2 * 86_400_000);
    const db = new Database(join(dataDir, 'coordination.sqlite'));
    const insert = db.prepare(`INSERT INTO leases (name, owner, expires_at, epoch, renewals, ttl_ms, renewed_at) VALUES (?, ?, ?, 1, 40, 15000, ?)`);
    for (const row of [recent, old]) insert.run(row.name, row.owner, row.renewedAt + 15_000, row.renewedAt);
    db.close();
    expect(announcementRows().filter((name) => name.startsWith('prober-region:eu-west:')).length).toBeGreaterThanOrEqual(1);

    t = await startTestApp({ DATA_DIR: dataDir, PROBE_REGION: 'eu-west' });
    const response = await t.admin('GET', '/api/v2/regions');
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toEqual([
      { name: 'eu-west', probers: 1, last_seen_at: expect.any(String), endpoints: 0, warning: null },
      { name: 'us-east', probers: 0, last_seen_at: new Date(recent.renewedAt).toISOString(), endpoints: 0, warning: null },
    ]);
    // Only the running prober's announcement and the one killed within the horizon are kept.
    expect(announcementRows()).toEqual([`prober-region:eu-west:${t.platform.instanceId}`, recent.name]);
  });
});
