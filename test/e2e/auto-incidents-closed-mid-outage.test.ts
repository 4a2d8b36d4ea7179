/**
 * An automatic incident closed by a person while its endpoint still fails (docs/decisions.md,
 * "Alerting and automatic incidents"): the outage goes on in another incident, never in none.
 * - merged into another incident: later failing checks are linked to the merge target, and the
 *   endpoint's alert status names it;
 * - resolved by hand: the next failing check opens a new automatic incident (linked as its
 *   first check), which the alert status names and the recovery resolves.
 * Before, both cases linked later failing checks nowhere and alert status kept naming the closed
 * incident. Everything is read through the public API, as a consumer sees it.
 */
import { jest } from '@jest/globals';
import { ALL_SCOPES, type TestApp } from '../support/test-app.js';
import { allEvents, eventually, monitorTarget, startHarness, startRogueIncidentReactor, type Harness, type Target } from './support.js';

jest.setTimeout(120_000);

const TRIGGER = { latency_detection_mode: 'off' as const, latency_trigger_count: 2, latency_trigger_window: 2, latency_recovery_count: 2 };
const API = '/api/public/v2';

interface Incident {
  id: number;
  source: string;
  project_id: number;
  resolved_at: string | null;
  first_error_at: string;
  error_count: number;
}

describe.each([
  ['one reactor', false],
  // A second process's reactor over the same stores that never asks for the lease handles every
  // event the first one handles (a paused process that lost its lease): still one new incident,
  // each check linked once, one signal link, whichever reactor handles a check first.
  ['two reactors and no coordination', true],
])('an automatic incident closed while its endpoint still fails (%s)', (_name, withRogue) => {
  let t: TestApp;
  let target: Target;
  let harness: Harness<{}> | undefined;
  let stopRogue: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    ({ t, target } = harness = await startHarness({}));
    if (withRogue) stopRogue = await startRogueIncidentReactor(t);
  });
  afterAll(async () => {
    await stopRogue?.();
    await harness?.close();
  });

  /** Each check linked once to each incident, one signal link to `incidentId`, at most one outage claim. */
  async function expectEachEffectOnce(incidentId: number): Promise<void> {
    const events = await allEvents(t);
    const links = events.filter((e) => e.type === 'IncidentCheckLinked').map((e) => `${e.data.incident_id}:${e.data.check.id}`);
    expect(new Set(links).size).toBe(links.length);
    expect(events.filter((e) => e.type === 'AlertSignalIncidentLinked' && e.data.incident_id === incidentId)).toHaveLength(1);
    expect(events.filter((e) => e.type === 'AutomaticIncidentClaimed' && e.streamId.startsWith('alerting-outage-')).length).toBeLessThanOrEqual(1);
  }

  async function outageStarts(): Promise<{ teamId: number; token: string; endpointId: number; automatic: Incident }> {
    target.mode = { status: 200, delayMs: 0 };
    const team = await t.createTeam('Closed mid-outage');
    const { token } = await t.issueToken(team.id, ALL_SCOPES, 'editor');
    const endpoint = await monitorTarget(t, team.id, target, 'health', TRIGGER);
    const get = (path: string) => t.request('GET', `${API}${path}`, { token });
    await eventually('a successful scheduled check', async () => (await get(`/endpoints/${endpoint.id}/checks?success=true`)).json().data.length > 0);
    target.mode = { status: 503, delayMs: 0 };
    const automatic = await eventually('an automatic incident', async () => (await get(`/incidents?endpoint_id=${endpoint.id}&source=automatic`)).json().data[0] as Incident | undefined);
    return { teamId: team.id, token, endpointId: endpoint.id, automatic };
  }

  const availabilityIncidentOf = async (token: string, endpointId: number): Promise<number | null> => {
    const signals = (await t.request('GET', `${API}/endpoints/${endpointId}/alert-status`, { token })).json().data.signals as Array<{ type: string; incident_id: number | null }>;
    return signals.find((signal) => signal.type === 'availability')!.incident_id;
  };

  const failingCheckIds = async (token: string, endpointId: number): Promise<number[]> =>
    ((await t.request('GET', `${API}/endpoints/${endpointId}/checks?source=scheduled&success=false&limit=100`, { token })).json().data as Array<{ id: number }>).map((check) => check.id).sort((a, b) => a - b);

  const linkedCheckIds = async (token: string, incidentId: number): Promise<number[]> =>
    ((await t.request('GET', `${API}/incidents/${incidentId}/checks?limit=100`, { token })).json().data as Array<{ id: number }>).map((check) => check.id).sort((a, b) => a - b);

  it('merged into another incident: the target takes every later failing check and the alert status names it', async () => {
    const { teamId, token, endpointId, automatic } = await outageStarts();
    const created = await t.request('POST', `${API}/incidents`, { token, body: { project_id: automatic.project_id, title: 'Customer-facing outage' } });
    const target_ = created.json().data.id as number;
    const merged = await t.request('POST', `${API}/incidents/${target_}/merge`, { token, body: { source_incident_ids: [automatic.id] } });
    expect(merged.statusCode).toBe(200);
    const atMerge = merged.json().data.error_count as number;

    await eventually('the alert status to name the merge target', async () => (await availabilityIncidentOf(token, endpointId)) === target_);
    await eventually('failing checks after the merge linked to the target', async () => (await t.request('GET', `${API}/incidents/${target_}`, { token })).json().data.error_count >= atMerge + 2);

    target.mode = { status: 200, delayMs: 0 };
    await eventually('the signal to recover', async () => (await availabilityIncidentOf(token, endpointId)) === null);
    // Every failing check of the outage, before and after the merge, is the target's, once.
    await eventually('every failing check linked to the target', async () => {
      const [failing, linked] = [await failingCheckIds(token, endpointId), await linkedCheckIds(token, target_)];
      return failing.length > 0 && JSON.stringify(failing) === JSON.stringify(linked);
    });
    const automaticIncidents = (await t.request('GET', `${API}/incidents?endpoint_id=${endpointId}&source=automatic`, { token })).json().data as Incident[];
    expect(automaticIncidents.map((incident) => incident.id)).toEqual([automatic.id]);
    await expectEachEffectOnce(target_);
    await t.admin('PATCH', `/api/v2/teams/${teamId}/endpoints/${endpointId}`, { enabled: false });
  });

  it('resolved by hand: the next failing check opens a new automatic incident, which the recovery resolves', async () => {
    const { teamId, token, endpointId, automatic } = await outageStarts();
    const resolved = await t.request('PATCH', `${API}/incidents/${automatic.id}/status`, { token, body: { resolved: true } });
    expect(resolved.statusCode).toBe(200);
    const resolvedAt = resolved.json().data.resolved_at as string;

    const next = await eventually('a new automatic incident for the endpoint', async () =>
      ((await t.request('GET', `${API}/incidents?endpoint_id=${endpointId}&source=automatic`, { token })).json().data as Incident[]).find((incident) => incident.id !== automatic.id),
    );
    expect(next.resolved_at).toBeNull();
    expect(Date.parse(next.first_error_at)).toBeGreaterThanOrEqual(Date.parse(resolvedAt) - 1000);
    await eventually('the alert status to name the new incident', async () => (await availabilityIncidentOf(token, endpointId)) === next.id);

    target.mode = { status: 200, delayMs: 0 };
    // The rogue reactor has no fence, so its view of the open incident may overwrite the real
    // one's as it catches up; the recovery still resolves the incident the alerts stream links.
    const after = await eventually('the new incident to resolve on recovery', async () => {
      const data = (await t.request('GET', `${API}/incidents/${next.id}`, { token })).json().data as Incident;
      return data.resolved_at !== null ? data : null;
    });
    expect(after.error_count).toBeGreaterThan(0);
    const first = (await t.request('GET', `${API}/incidents/${automatic.id}`, { token })).json().data as Incident;
    expect(first.resolved_at).toBe(resolvedAt);
    await expectEachEffectOnce(next.id);
    await t.admin('PATCH', `/api/v2/teams/${teamId}/endpoints/${endpointId}`, { enabled: false });
  });
});
