import { createEndpoint, createProject, readerTeam } from '../support/monitoring-fixtures.js';
import { startedBeforeAll } from '../support/started-before-all.js';
import { startTestApp } from '../support/test-app.js';

/** Endpoint settings `regions` and `region_quorum` through both APIs. */
describe('endpoint regions and region quorum', () => {
  const t = startedBeforeAll(() => startTestApp(), (app) => app.close());

  const errorsOf = (response: { json(): any }) => response.json().errors.map((e: any) => ({ field: e.field, code: e.code }));

  /** The developer API's Endpoint (the application API's is the create/PATCH answer). */
  async function publicRegions(token: string, endpointId: number) {
    const data = (await t.request('GET', `/api/public/v2/endpoints/${endpointId}`, { token })).json().data;
    return { regions: data.regions, region_quorum: data.region_quorum };
  }

  it('defaults to no regions and a null quorum', async () => {
    const { teamId, token } = await readerTeam(t);
    const project = await createProject(t, teamId);
    const endpoint = await createEndpoint(t, teamId, project.id);
    expect(endpoint).toMatchObject({ regions: [], region_quorum: null, configuration_version: 1 });
    expect(await publicRegions(token, endpoint.id)).toEqual({ regions: [], region_quorum: null });
    // Restating "no regions" changes nothing.
    const patched = await t.admin('PATCH', `/api/v2/teams/${teamId}/endpoints/${endpoint.id}`, { regions: [], region_quorum: null });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().data).toMatchObject({ regions: [], region_quorum: null, configuration_version: 1 });
  });

  it('takes regions on create with the default quorum ceil(n/2), and follows PATCH', async () => {
    const { teamId, token } = await readerTeam(t);
    const project = await createProject(t, teamId);
    const endpoint = await createEndpoint(t, teamId, project.id, { regions: ['eu-west', 'us-east', 'ap-south'] });
    expect(endpoint).toMatchObject({ regions: ['eu-west', 'us-east', 'ap-south'], region_quorum: 2 });
    expect(await publicRegions(token, endpoint.id)).toEqual({ regions: ['eu-west', 'us-east', 'ap-south'], region_quorum: 2 });
    const patch = async (body: object) => {
      const response = await t.admin('PATCH', `/api/v2/teams/${teamId}/endpoints/${endpoint.id}`, body);
      expect(response.statusCode).toBe(200);
      return response.json().data;
    };
    expect(await patch({ region_quorum: 3 })).toMatchObject({ regions: ['eu-west', 'us-east', 'ap-south'], region_quorum: 3, configuration_version: 2 });
    // New regions without a quorum: the default for them.
    expect(await patch({ regions: ['a', 'b', 'c', 'd'] })).toMatchObject({ regions: ['a', 'b', 'c', 'd'], region_quorum: 2 });
    expect(await patch({ regions: ['a', 'b', 'c', 'd'], region_quorum: 4 })).toMatchObject({ region_quorum: 4 });
    expect(await patch({ region_quorum: null })).toMatchObject({ region_quorum: 2 });
    expect(await patch({ regions: [] })).toMatchObject({ regions: [], region_quorum: null });
    expect(await publicRegions(token, endpoint.id)).toEqual({ regions: [], region_quorum: null });
  });

  it('refuses bad regions and quorums, listing every broken rule', async () => {
    const { teamId } = await readerTeam(t);
    const project = await createProject(t, teamId);
    const create = (extra: object) => t.admin('POST', `/api/v2/teams/${teamId}/endpoints`, { project_id: project.id, name: 'E', url: 'https://example.com/', ...extra });

    const badNames = await create({ regions: ['EU', 'eu_west', 'x'.repeat(33)] });
    expect(badNames.statusCode).toBe(400);
    expect(errorsOf(badNames).map((e: { field: string }) => e.field)).toContain('regions');
    expect((await create({ regions: ['a', 'a'] })).statusCode).toBe(400);
    expect((await create({ regions: Array.from({ length: 17 }, (_, i) => `r${i}`) })).statusCode).toBe(400);
    expect((await create({ regions: 'a' })).statusCode).toBe(400);
    expect((await create({ regions: ['a'], region_quorum: 0 })).statusCode).toBe(400);
    expect((await create({ regions: ['a'], region_quorum: 1.5 })).statusCode).toBe(400);

    const tooMany = await create({ regions: ['a', 'b'], region_quorum: 3 });
    expect(tooMany.statusCode).toBe(400);
    expect(errorsOf(tooMany)).toEqual([{ field: 'region_quorum', code: 'out_of_range' }]);
    const withoutRegions = await create({ region_quorum: 1 });
    expect(withoutRegions.statusCode).toBe(400);
    expect(errorsOf(withoutRegions)).toEqual([{ field: 'region_quorum', code: 'invalid_value' }]);

    const endpoint = await createEndpoint(t, teamId, project.id, { regions: ['a', 'b'] });
    const shrink = await t.admin('PATCH', `/api/v2/teams/${teamId}/endpoints/${endpoint.id}`, { regions: ['a'], region_quorum: 2 });
    expect(shrink.statusCode).toBe(400);
    expect(errorsOf(shrink)).toEqual([{ field: 'region_quorum', code: 'out_of_range' }]);
    // Sixteen distinct regions are allowed, and a region no prober serves is not an error.
    expect((await create({ regions: Array.from({ length: 16 }, (_, i) => `nowhere-${i}`) })).statusCode).toBe(201);
  });
});
