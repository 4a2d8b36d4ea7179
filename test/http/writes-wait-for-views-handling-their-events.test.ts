/**
 * Read your writes is derived from the projections: a write answers once every view with a
 * handler for one of its events shows it (whichever context the view belongs to), and never
 * waits for a reactor it was not told to wait for. Each case holds one processor back and
 * watches what the write's answer does meanwhile.
 */
import { jest } from '@jest/globals';
import { ANALYTICS_ENDPOINTS_PROJECTION } from '../../src/analytics/views/endpoints/view.js';
import { ENDPOINT_REGISTERED, PROJECT_CREATED } from '../../src/monitoring/domain/events.js';
import { CHANNEL_UPDATED } from '../../src/notifications/domain/channel.js';
import { NOTIFICATIONS_VIEW } from '../../src/notifications/reactors/notifications/view.js';
import type { Projection } from '../../src/platform/projections/projection.js';
import { ALL_SCOPES, startTestApp, type TestApp } from '../support/test-app.js';

jest.setTimeout(60_000);

/** `name`'s handlers for `types` (all of them when omitted) wait until `release` is called. */
function heldBack(name: string, types?: string[]): { projections: (list: Projection[]) => Projection[]; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const projections = (list: Projection[]) =>
    list.map((projection) => {
      if (projection.name !== name) return projection;
      const handlers = { ...projection.handlers };
      for (const type of types ?? Object.keys(handlers)) {
        const apply = handlers[type]!;
        handlers[type] = async (...args: Parameters<typeof apply>) => {
          await gate;
          return apply(...args);
        };
      }
      return { ...projection, handlers };
    });
  return { projections, release };
}

describe('a write waits for the views that handle its events', () => {
  let t: TestApp;
  const projectCreated = heldBack(ANALYTICS_ENDPOINTS_PROJECTION, [PROJECT_CREATED]);
  const endpointRegistered = heldBack(ANALYTICS_ENDPOINTS_PROJECTION, [ENDPOINT_REGISTERED]);
  afterAll(async () => {
    projectCreated.release();
    endpointRegistered.release();
    await t?.close();
  });

  it('creating a project and registering an endpoint answer once project analytics show them', async () => {
    t = await startTestApp({}, { projections: (list) => endpointRegistered.projections(projectCreated.projections(list)) });
    const team = await t.createTeam('Analysts');
    const { token } = await t.issueToken(team.id, ALL_SCOPES, 'editor');
    const analytics = (projectId: number) => t.request('GET', `/api/public/v2/projects/${projectId}/analytics`, { token });

    const creating = t.admin('POST', `/api/v2/teams/${team.id}/projects`, { name: 'New' });
    setTimeout(() => projectCreated.release(), 300);
    const created = await creating;
    expect(created.statusCode).toBe(201);
    const projectId = created.json().data.id as number;
    expect((await analytics(projectId)).statusCode).toBe(200);

    const registering = t.admin('POST', `/api/v2/teams/${team.id}/endpoints`, { project_id: projectId, name: 'Fresh', url: 'https://example.com/health' });
    setTimeout(() => endpointRegistered.release(), 300);
    const registered = await registering;
    expect(registered.statusCode).toBe(201);
    const rows = (await analytics(projectId)).json().data.endpoints;
    expect(rows.map((row: { endpoint_id: number }) => row.endpoint_id)).toEqual([registered.json().data.id]);
  });
});

describe('a lagging reactor', () => {
  let t: TestApp;
  const held = heldBack(NOTIFICATIONS_VIEW);
  afterAll(async () => {
    held.release();
    await t?.close();
  });

  it('does not hold the answer of a write whose events it handles (an incident opened while notifications stand still)', async () => {
    t = await startTestApp({}, { projections: held.projections });
    const team = await t.createTeam('Quiet');
    const { token } = await t.issueToken(team.id, ALL_SCOPES, 'editor');
    const project = (await t.admin('POST', `/api/v2/teams/${team.id}/projects`, { name: 'P' })).json().data;

    const opened = await t.request('POST', '/api/public/v2/incidents', { token, body: { project_id: project.id, title: 'Down' } });
    // A wait for the held reactor would run into the bound: 202 views_behind.
    expect(opened.statusCode).toBe(201);
    expect((await t.request('GET', `/api/public/v2/incidents/${opened.json().data.id}`, { token })).statusCode).toBe(200);
  });
});

describe('a channel write', () => {
  let t: TestApp;
  const held = heldBack(NOTIFICATIONS_VIEW, [CHANNEL_UPDATED]);
  afterAll(async () => {
    held.release();
    await t?.close();
  });

  it('waits for the channel list the notifications reactor keeps (named explicitly)', async () => {
    t = await startTestApp({}, { projections: held.projections });
    const team = await t.createTeam('Hooks');
    const base = `/api/v2/teams/${team.id}/notification-channels`;
    const channel = (await t.admin('POST', base, { name: 'Before', kind: 'webhook', config: { url: 'https://example.com/hook' } })).json().data;

    const renaming = t.admin('PATCH', `${base}/${channel.id}`, { name: 'After' });
    setTimeout(() => held.release(), 300);
    expect((await renaming).statusCode).toBe(200);
    expect((await t.admin('GET', `${base}/${channel.id}`)).json().data.name).toBe('After');
  });
});
