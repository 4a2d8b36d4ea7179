import { burnTransitions, decideBurn, decideIncidentLink, type Counts } from '../../../src/slos/domain/budget.js';
import { SLO_BURN_ALERT_RECOVERED, SLO_BURN_ALERT_TRIGGERED, SLO_CREATED, SLO_ENDPOINT_DELETED, SLO_PROJECT_EMPTIED, SLO_UPDATED } from '../../../src/slos/domain/events.js';
import { decide, decideEndpointDeleted, decideProjectEmptied, evolve, initialState, type SloState } from '../../../src/slos/domain/slo.js';

/** The multiwindow burn-rate rules at their edges (objective 99 %: a burn rate of 14.4 is 14.4 % bad). */

const created = (objective = 99): SloState =>
  evolve(initialState(), {
    type: SLO_CREATED,
    data: { slo_id: 7, team_id: 1, name: 'Checkout', endpoint_ids: [3], project_id: null, objective_percent: objective, window_days: 30, latency_threshold_ms: null, created_at: '2026-01-01T00:00:00.000Z' },
  });
const bad = (badChecks: number, total: number): Counts => ({ total, good: total - badChecks });
const at = '2026-01-02T00:00:00.000Z';
const check = { check_id: 100, endpoint_id: 3 };

describe('burn-rate alert rules', () => {
  test('a page needs both the 1h and the 5m window strictly above 14.4', () => {
    const state = created();
    // 144 bad of 1000 is exactly 14.4: not above.
    expect(burnTransitions(state, { '1h': bad(144, 1000), '5m': bad(50, 100) })).toEqual([]);
    expect(burnTransitions(state, { '1h': bad(145, 1000), '5m': bad(144, 1000) })).toEqual([]);
    expect(burnTransitions(state, { '1h': bad(145, 1000), '5m': bad(15, 100) })).toEqual([
      { kind: 'trigger', data: { severity: 'page', long_window: '1h', long_burn_rate: 14.5, short_window: '5m', short_burn_rate: 15 } },
    ]);
  });

  test('a ticket needs the 6h and 30m windows above 6; both alerts may trigger together', () => {
    const events = decideBurn(created(), { '1h': bad(1, 2), '5m': bad(1, 1), '6h': bad(1, 2), '30m': bad(1, 1) }, check, at);
    expect(events.map((e) => [e.type, (e.data as { severity: string }).severity])).toEqual([
      [SLO_BURN_ALERT_TRIGGERED, 'page'],
      [SLO_BURN_ALERT_TRIGGERED, 'ticket'],
    ]);
    expect(decideBurn(created(), { '6h': bad(6, 100), '30m': bad(7, 100) }, check, at)).toEqual([]);
  });

  test('an active alert recovers once its short window drops under the factor, not at it, and does not trigger twice', () => {
    let state = created();
    for (const e of decideBurn(state, { '1h': bad(1, 1), '5m': bad(1, 1) }, check, at)) state = evolve(state, e);
    expect(state.alerts.page).toEqual({ since: at, incident_id: null });
    expect(decideBurn(state, { '1h': bad(1, 1), '5m': bad(1, 1) }, check, at)).toEqual([]);
    // The 1h window still burns fast; the short window decides the recovery.
    expect(decideBurn(state, { '1h': bad(1, 1), '5m': bad(144, 1000) }, check, at)).toEqual([]);
    const recovered = decideBurn(state, { '1h': bad(1, 1), '5m': bad(143, 1000) }, check, at);
    expect(recovered).toMatchObject([{ type: SLO_BURN_ALERT_RECOVERED, data: { severity: 'page', short_window: '5m', short_burn_rate: 14.3 } }]);
    // A short window without checks burns nothing.
    expect(decideBurn(state, { '1h': bad(1, 1), '5m': { total: 0, good: 0 } }, check, at)).toMatchObject([{ type: SLO_BURN_ALERT_RECOVERED, data: { short_burn_rate: null } }]);
  });

  test('the incident is linked once, to the alert it was opened for; a deleted SLO decides nothing', () => {
    let state = created();
    for (const e of decideBurn(state, { '1h': bad(1, 1), '5m': bad(1, 1) }, check, at)) state = evolve(state, e);
    const link = decideIncidentLink(state, 'page', at, 42);
    expect(link).toHaveLength(1);
    state = evolve(state, link[0]);
    expect(state.alerts.page).toEqual({ since: at, incident_id: 42 });
    expect(decideIncidentLink(state, 'page', at, 43)).toEqual([]);
    expect(decideIncidentLink(state, 'page', '2026-01-01T00:00:00.000Z', 43)).toEqual([]);
    const deleted = decide(state, { kind: 'delete', team_id: 1, at });
    if (!deleted.ok) throw new Error('delete refused');
    const gone = evolve(state, deleted.events[0]);
    expect(gone.alerts).toEqual({ page: null, ticket: null });
    expect(decideBurn(gone, { '1h': bad(1, 1), '5m': bad(1, 1) }, check, at)).toEqual([]);
  });

  test('objectives with 3 decimals keep exact budgets (99.999 %: 1 bad in 100,000 is a burn rate of 1)', () => {
    const state = created(99.999);
    expect(burnTransitions(state, { '1h': bad(15, 100_000), '5m': bad(14, 100_000) })).toEqual([]);
    expect(burnTransitions(state, { '1h': bad(15, 100_000), '5m': bad(15, 100_000) })).toMatchObject([{ kind: 'trigger', data: { long_burn_rate: 15, short_burn_rate: 15 } }]);
  });

  test('a deleted endpoint leaves the list; the last one leaves no endpoint and ends the alerts', () => {
    let state = evolve(created(), { type: SLO_UPDATED, data: { slo_id: 7, team_id: 1, changes: { endpoint_ids: [3, 4] }, updated_at: at } });
    for (const e of decideBurn(state, { '1h': bad(1, 1), '5m': bad(1, 1) }, check, at)) state = evolve(state, e);
    expect(decideEndpointDeleted(state, 5, at)).toEqual([]);
    const first = decideEndpointDeleted(state, 3, at);
    expect(first).toMatchObject([{ type: SLO_ENDPOINT_DELETED, data: { endpoint_id: 3, endpoint_ids: [4] } }]);
    state = evolve(state, first[0]);
    expect(state.endpoint_ids).toEqual([4]);
    expect(state.alerts.page).toEqual({ since: at, incident_id: null });
    state = evolve(state, decideEndpointDeleted(state, 4, at)[0]);
    expect(state).toMatchObject({ endpoint_ids: [], alerts: { page: null, ticket: null } });
    expect(decideEndpointDeleted(state, 4, at)).toEqual([]);
  });

  test("a project left without an endpoint ends its SLO's active alerts, once; other projects' SLOs and quiet SLOs decide nothing", () => {
    const emptied = { project_id: 5, endpoint_id: 3, left_by: 'moved' as const, emptied_at: at };
    let state = evolve(created(), { type: SLO_UPDATED, data: { slo_id: 7, team_id: 1, changes: { project_id: 5, endpoint_ids: null }, updated_at: at } });
    expect(decideProjectEmptied(state, emptied)).toEqual([]);
    for (const e of decideBurn(state, { '1h': bad(1, 1), '5m': bad(1, 1), '6h': bad(1, 1), '30m': bad(1, 1) }, check, at)) state = evolve(state, e);
    expect(decideProjectEmptied(state, { ...emptied, project_id: 6 })).toEqual([]);
    const ended = decideProjectEmptied(state, emptied);
    expect(ended).toEqual([{ type: SLO_PROJECT_EMPTIED, data: { slo_id: 7, team_id: 1, ...emptied } }]);
    state = evolve(state, ended[0]);
    expect(state).toMatchObject({ project_id: 5, endpoint_ids: null, alerts: { page: null, ticket: null } });
    expect(decideProjectEmptied(state, emptied)).toEqual([]);
    // It measures again: the next live checks of the project may trigger anew.
    expect(decideBurn(state, { '1h': bad(1, 1), '5m': bad(1, 1) }, check, at)).toMatchObject([{ type: SLO_BURN_ALERT_TRIGGERED, data: { severity: 'page' } }]);
  });
});
