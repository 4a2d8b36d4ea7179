import { jest } from '@jest/globals';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { configuration, registerEndpoint, startTarget, type Target } from '../e2e/support.js';

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
    const endpoint = await registerEndpoint(t, team.id, configuration(`${target.url}/regions`, overrides));
    target.tokens.set(endpoint.id, endpoint.token);
    expect((await t.admin('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/verify-destination`)).statusCode).toBe(200);
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
    const endpoint = await registerEndpoint(t, team.id, configuration(`${target.url}/local`));
    target.tokens.set(endpoint.id, endpoint.token);
    expect((await t.admin('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/verify-destination`)).statusCode).toBe(200);
    const before = target.regions.length;
    expect((await t.admin('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/checks`)).statusCode).toBe(201);
    expect(target.regions.slice(before)).toEqual(['local']);
    const listed = await t.request('GET', `/api/public/v2/endpoints/${endpoint.id}/checks?region=local`, { token });
    expect(listed.json().data.map((check: { region: string }) => check.region)).toEqual(['local']);
  });
});
