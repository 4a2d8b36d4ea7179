/**
 * SLO burn incidents kept open by `auto_resolve: false` (docs/api.md "SLOs"), as their users meet
 * them through HTTP: the burn alerts' transitions are appended to the SLO's stream as the burn
 * reactor's evaluation appends them (no probing: the e2e test covers the evaluation), the rest
 * goes through the API.
 * - The page and the ticket alert of one SLO kept open at once: each incident records its own
 *   alert's end and awaits its own alert again; no third incident; the incident.updated of each
 *   trigger-again names the incident as GET shows it; each trigger-again moves `last_error_at`
 *   (the list `from` then finds both).
 * - Resolved by a person while its alert had ended: the next trigger opens a new incident; its
 *   SLO's last endpoint deleted later leaves its history alone.
 * - Merged into another incident while its alert had ended: the next trigger opens a new
 *   incident (as an endpoint signal's does); the merge target is left alone.
 * - Its SLO deleted, one alert ended and one active: both incidents stay open (auto_resolve on
 *   resolves them) and the reactor keeps neither (read through the read store).
 */
import { jest } from '@jest/globals';
import { systemContext } from '../../src/platform/es/command-context.js';
import { runStreamCommand } from '../../src/platform/es/stream-command.js';
import type { NewEvent } from '../../src/platform/event-store/event-store.port.js';
import { SLO_BURN_ALERT_RECOVERED, SLO_BURN_ALERT_TRIGGERED, SLO_BURN_INCIDENT_LINKED, sloStream, type BurnSeverity, type SloBurnIncidentLinkedData } from '../../src/slos/domain/events.js';
import { sloAggregate } from '../../src/slos/domain/slo.js';
import { SLO_BURN_REACTOR } from '../../src/slos/reactors/burn-alerts.js';
import { eventually } from '../support/eventually.js';
import { createEndpoint, createProject } from '../support/monitoring-fixtures.js';
import { startReceiver, type Receiver } from '../support/notification-receiver.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

jest.setTimeout(60_000);

const RULES = {
  page: { long_window: '1h', short_window: '5m' },
  ticket: { long_window: '6h', short_window: '30m' },
} as const;

describe('SLO burn incidents kept open, through the API', () => {
  let t: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  /** A team with a webhook channel at `path`, an endpoint, an SLO over it and an editor token. */
  async function sloTeam(path: string) {
    const team = await t.createTeam('Kept open');
    const projectId: number = (await createProject(t, team.id)).id;
    const endpoint = await createEndpoint(t, team.id, projectId);
    expect((await t.admin('POST', `/api/v2/teams/${team.id}/notification-channels`, { name: 'Ops', kind: 'webhook', config: { url: `${receiver.url}${path}` } })).statusCode).toBe(201);
    const created = await t.admin('POST', `/api/v2/teams/${team.id}/slos`, { name: 'Checkout', endpoint_ids: [endpoint.id], objective_percent: 99 });
    expect(created.statusCode).toBe(201);
    const sloId: number = created.json().data.id;
    const { token } = await t.issueToken(team.id, ['incidents:read', 'incidents:write'], 'editor');
    const append = async (type: string, data: object) => {
      await runStreamCommand(t.platform.events, sloStream(sloId), sloAggregate, systemContext('test'), () => ({ events: [{ type, data }] as NewEvent[], result: null }));
    };
    const now = () => new Date().toISOString();
    const base = (severity: BurnSeverity) => ({ slo_id: sloId, team_id: team.id, severity, check_id: 1 });
    const linked = async () =>
      (await t.platform.events.readStream(sloStream(sloId))).filter((e) => e.type === SLO_BURN_INCIDENT_LINKED).map((e) => e.data as SloBurnIncidentLinkedData);
    const incident = async (id: number) => (await t.request('GET', `/api/public/v2/incidents/${id}`, { token })).json().data;
    return {
      team,
      projectId,
      endpoint,
      sloId,
      trigger: (severity: BurnSeverity) =>
        append(SLO_BURN_ALERT_TRIGGERED, { ...base(severity), long_window: RULES[severity].long_window, long_burn_rate: 20, short_window: RULES[severity].short_window, short_burn_rate: 30, endpoint_id: endpoint.id, triggered_at: now() }),
      recover: (severity: BurnSeverity) => append(SLO_BURN_ALERT_RECOVERED, { ...base(severity), short_window: RULES[severity].short_window, short_burn_rate: 1, recovered_at: now() }),
      /** The incident of each link (the n-th trigger's), once the burn reactor linked the n-th trigger of `severity`. */
      linkedIncident: async (severity: BurnSeverity, nth: number) =>
        eventually(`trigger ${nth} of the ${severity} alert linked`, async () => (await linked()).filter((l) => l.severity === severity)[nth - 1]?.incident_id),
      /** Incidents opened for the SLO, in order. */
      opened: async () =>
        (await t.platform.events.readAll({ maxCount: 100_000 })).filter((e) => e.type === 'IncidentOpened' && (e.data as { metadata?: { slo_id?: number } }).metadata?.slo_id === sloId).map((e) => (e.data as { incident_id: number }).incident_id),
      incident,
      patchStatus: async (id: number, body: object) => {
        const response = await t.request('PATCH', `/api/public/v2/incidents/${id}/status`, { token, body });
        expect(response.statusCode).toBe(200);
        return response.json().data;
      },
      summaries: async (id: number) =>
        ((await t.admin('GET', `/api/v2/teams/${team.id}/incidents/${id}/history`)).json().data.events as Array<{ summary: string }>).map((event) => event.summary),
      token,
    };
  }

  const ended = (severity: BurnSeverity) => `SLO burn alert (${severity}) ended; kept open: automatic resolution is off`;
  const againPrefix = (severity: BurnSeverity) => `SLO burn alert (${severity}) triggered again: SLO "Checkout"`;

  it('keeps the page and the ticket incident of one SLO open at once, each awaiting its own alert again', async () => {
    const slo = await sloTeam('/both');
    await slo.trigger('page');
    await slo.trigger('ticket');
    const page = await slo.linkedIncident('page', 1);
    const ticket = await slo.linkedIncident('ticket', 1);
    expect(page).not.toBe(ticket);
    for (const id of [page, ticket]) expect((await slo.patchStatus(id, { auto_resolve: false })).auto_resolve).toBe(false);

    await slo.recover('page');
    await slo.recover('ticket');
    for (const [id, severity] of [[page, 'page'], [ticket, 'ticket']] as const) {
      await eventually(`the ${severity} incident to record its alert's end`, async () => (await slo.summaries(id)).includes(ended(severity)));
      expect((await slo.summaries(id)).filter((s) => s.startsWith('SLO burn alert'))).toEqual([ended(severity)]);
      expect(await slo.incident(id)).toMatchObject({ resolved_at: null, auto_resolve: false });
    }

    const lastOpened = (await slo.incident(ticket)).last_error_at;
    await eventually('the clock past the openings', () => new Date().toISOString() > lastOpened);
    const burningAgainFrom = new Date().toISOString();
    await slo.trigger('page');
    await slo.trigger('ticket');
    expect([await slo.linkedIncident('page', 2), await slo.linkedIncident('ticket', 2)]).toEqual([page, ticket]);
    for (const [id, severity] of [[page, 'page'], [ticket, 'ticket']] as const) {
      const summaries = await eventually(`the ${severity} incident to await its alert again`, async () => {
        const all = await slo.summaries(id);
        return all.some((s) => s.startsWith(againPrefix(severity))) ? all : null;
      });
      // Its own alert only: the other severity's transitions never reach it.
      expect(summaries.filter((s) => s.startsWith('SLO burn alert')).map((s) => s.slice(0, `SLO burn alert (${severity})`.length))).toEqual([`SLO burn alert (${severity})`, `SLO burn alert (${severity})`]);
    }
    expect(await slo.opened()).toEqual([page, ticket]);
    // Burning again is an error as the opening trigger was: `last_error_at` moves, so a list from then finds both.
    const listedFrom = async () =>
      ((await t.request('GET', `/api/public/v2/incidents?from=${encodeURIComponent(burningAgainFrom)}`, { token: slo.token })).json().data as Array<{ id: number }>).map((i) => i.id);
    await eventually('both listed from the trigger again', async () => (await listedFrom()).length === 2);
    expect((await listedFrom()).sort((a, b) => a - b)).toEqual([page, ticket].sort((a, b) => a - b));

    // Each trigger-again is an incident.updated naming the incident as GET shows it.
    for (const id of [page, ticket]) {
      const updated = await eventually(`incident.updated for ${id}`, async () => receiver.of('incident.updated').filter((r) => r.path === '/both' && r.json.data.incident.id === id).at(-1));
      const read = await slo.incident(id);
      for (const [field, value] of Object.entries(updated.json.data.incident)) expect([field, read[field]]).toEqual([field, value]);
    }

    // Ended again; on again: each resolves on its own.
    await slo.recover('page');
    await eventually('the page end recorded twice', async () => (await slo.summaries(page)).filter((s) => s === ended('page')).length === 2);
    expect(await slo.patchStatus(page, { auto_resolve: true })).toMatchObject({ resolved_at: expect.any(String) });
    expect(await slo.patchStatus(ticket, { auto_resolve: true })).toMatchObject({ resolved_at: null });
  });

  /** An SLO's ticket incident kept open by auto_resolve off, its alert's end recorded. */
  async function endedTicketKeptOpen(path: string) {
    const slo = await sloTeam(path);
    await slo.trigger('ticket');
    const incident = await slo.linkedIncident('ticket', 1);
    await slo.patchStatus(incident, { auto_resolve: false });
    await slo.recover('ticket');
    await eventually('the end recorded', async () => (await slo.summaries(incident)).includes(ended('ticket')));
    return { slo, incident };
  }

  it('a kept-open burn incident resolved by a person while its alert had ended: the next trigger opens a new incident', async () => {
    const { slo, incident: first } = await endedTicketKeptOpen('/manual');
    expect(await slo.patchStatus(first, { resolved: true })).toMatchObject({ resolved_at: expect.any(String) });

    await slo.trigger('ticket');
    const second = await slo.linkedIncident('ticket', 2);
    expect(second).not.toBe(first);
    expect(await slo.opened()).toEqual([first, second]);
    // The reactor opens the incident without waiting for the incidents view: GET shows it once that applied it.
    expect(await eventually('the new incident shown', () => slo.incident(second))).toMatchObject({ resolved_at: null, auto_resolve: true, type: 'slo_burn' });
    expect((await slo.summaries(first)).some((s) => s.startsWith(againPrefix('ticket')))).toBe(false);
    // The new one resolves on the alert's end; the first is left as the person left it.
    const firstResolvedAt = (await slo.incident(first)).resolved_at;
    await slo.recover('ticket');
    await eventually('the new incident resolved', async () => (await slo.incident(second)).resolved_at !== null);
    expect((await slo.incident(first)).resolved_at).toBe(firstResolvedAt);
  });

  /** An SLO's page and ticket incidents kept open by auto_resolve off: the page's alert has ended (its end recorded), the ticket's burns on. */
  async function pageEndedTicketBurning(path: string) {
    const slo = await sloTeam(path);
    await slo.trigger('page');
    await slo.trigger('ticket');
    const page = await slo.linkedIncident('page', 1);
    const ticket = await slo.linkedIncident('ticket', 1);
    for (const id of [page, ticket]) await slo.patchStatus(id, { auto_resolve: false });
    await slo.recover('page');
    await eventually('the page end recorded', async () => (await slo.summaries(page)).includes(ended('page')));
    return { slo, page, ticket };
  }

  it('a kept-open burn incident resolved by a person is left alone when its SLO loses its last endpoint', async () => {
    const { slo, page, ticket } = await pageEndedTicketBurning('/resolved-then-endpoint-deleted');
    await slo.patchStatus(page, { resolved: true });
    const resolvedPage = { incident: await slo.incident(page), history: await slo.summaries(page) };

    // The ticket, still burning and kept open, is the witness: its end is handled after the page's.
    expect((await t.admin('DELETE', `/api/v2/teams/${slo.team.id}/endpoints/${slo.endpoint.id}`)).statusCode).toBe(204);
    await eventually('the ticket end recorded', async () => (await slo.summaries(ticket)).includes(ended('ticket')));
    expect(await slo.summaries(page)).toEqual(resolvedPage.history);
    expect(await slo.incident(page)).toEqual(resolvedPage.incident);
  });

  /**
   * What the burn reactor keeps of each incident its alerts hold (its collection `open`, committed
   * with its checkpoint): read through the read store, since no public surface shows it. An
   * entry left for a deleted SLO would never be used again (nothing triggers its alerts).
   */
  async function heldByReactor(incidentIds: number[]): Promise<number[]> {
    const rows = await t.platform.reader.find(SLO_BURN_REACTOR, 'open', {});
    return rows.map((row) => Number(row.incident_id)).filter((id) => incidentIds.includes(id)).sort((a, b) => a - b);
  }

  it('a deleted SLO leaves nothing in the reactor for the incidents it kept open', async () => {
    // The page's alert has ended (kept open, awaited again); the ticket's is active at the deletion.
    const { slo, page, ticket } = await pageEndedTicketBurning('/deleted');
    const both = [page, ticket].sort((a, b) => a - b);
    await eventually('both incidents held by the reactor', async () => (await heldByReactor(both)).length === 2);

    expect((await t.admin('DELETE', `/api/v2/teams/${slo.team.id}/slos/${slo.sloId}`)).statusCode).toBe(204);
    await eventually('the ticket end recorded', async () => (await slo.summaries(ticket)).includes(ended('ticket')));
    await eventually('neither incident held by the reactor any more', async () => (await heldByReactor(both)).length === 0);
    // Both stay open as auto_resolve off asks; turned on, each resolves (its alert has ended).
    for (const id of [page, ticket]) {
      expect(await slo.incident(id)).toMatchObject({ resolved_at: null });
      expect(await slo.patchStatus(id, { auto_resolve: true })).toMatchObject({ resolved_at: expect.any(String) });
    }
  });

  it('a kept-open burn incident merged into another while its alert had ended: the next trigger opens a new incident, the target is left alone', async () => {
    const { slo, incident: source } = await endedTicketKeptOpen('/merged');
    const target = await t.request('POST', '/api/public/v2/incidents', { token: slo.token, body: { title: 'Checkout degraded', project_id: slo.projectId, severity: 'critical' } });
    expect(target.statusCode).toBe(201);
    const targetId: number = target.json().data.id;
    const merged = await t.request('POST', `/api/public/v2/incidents/${targetId}/merge`, { token: slo.token, body: { source_incident_ids: [source] } });
    expect(merged.statusCode).toBe(200);
    const targetHistory = await slo.summaries(targetId);

    await slo.trigger('ticket');
    const next = await slo.linkedIncident('ticket', 2);
    expect([source, targetId]).not.toContain(next);
    expect(await slo.opened()).toEqual([source, next]);
    expect(await slo.incident(targetId)).toMatchObject({ resolved_at: null });
    expect(await slo.summaries(targetId)).toEqual(targetHistory);
  });
});
