import { STATUS_PAGE_SLUG_CLAIMED } from '../../../src/statuspages/domain/events.js';
import { renderAtom, renderRss } from '../../../src/statuspages/http/render-feeds.js';
import { buildStatusModel, componentStatus, pageIndicator, updateStatus, type EndpointInput, type StatusInputs } from '../../../src/statuspages/domain/public-status.js';
import { decideClaim, decideRelease, evolveSlug, initialSlugState, STALE_CLAIM_MS } from '../../../src/statuspages/domain/slug.js';
import { decide, evolve, initialState } from '../../../src/statuspages/domain/status-page.js';

const T0 = Date.parse('2026-11-20T10:00:00.000Z');

describe('slug claims', () => {
  const claimed = (pageId: number, at: number) => evolveSlug(initialSlugState(), { type: STATUS_PAGE_SLUG_CLAIMED, data: { slug: 's', page_id: pageId, claimed_at: new Date(at).toISOString() } });

  test('a free slug is claimed; the holder claiming again changes nothing', () => {
    expect(decideClaim('s', initialSlugState(), 1, null, T0)).toEqual({ ok: true, events: [expect.objectContaining({ type: STATUS_PAGE_SLUG_CLAIMED })] });
    expect(decideClaim('s', claimed(1, T0), 1, null, T0)).toEqual({ ok: true, events: [] });
  });

  test('a claim whose page holds the slug is never taken over, however old', () => {
    expect(decideClaim('s', claimed(1, T0), 2, { slug: 's', deleted: false }, T0 + 365 * 86_400_000)).toEqual({ ok: false, reason: 'taken' });
  });

  test('a fresh claim whose page does not (yet) hold the slug is respected: its request may still be running', () => {
    expect(decideClaim('s', claimed(1, T0), 2, { slug: null, deleted: false }, T0 + STALE_CLAIM_MS - 1)).toEqual({ ok: false, reason: 'taken' });
    expect(decideClaim('s', claimed(1, T0), 2, { slug: 'other', deleted: false }, T0 + 1000)).toEqual({ ok: false, reason: 'taken' });
  });

  test('an abandoned claim (page never written, or renamed away, a minute on; or deleted) is taken over', () => {
    expect(decideClaim('s', claimed(1, T0), 2, { slug: null, deleted: false }, T0 + STALE_CLAIM_MS).ok).toBe(true);
    expect(decideClaim('s', claimed(1, T0), 2, { slug: 'other', deleted: false }, T0 + STALE_CLAIM_MS).ok).toBe(true);
    expect(decideClaim('s', claimed(1, T0), 2, { slug: 's', deleted: true }, T0).ok).toBe(true);
  });

  test('only the holder releases', () => {
    expect(decideRelease('s', claimed(1, T0), 2, T0)).toEqual([]);
    const [released] = decideRelease('s', claimed(1, T0), 1, T0);
    expect(evolveSlug(claimed(1, T0), released)).toEqual(initialSlugState());
  });
});

describe('the page aggregate', () => {
  const fields = { slug: 'a', title: 'A', description: '', components: [{ endpoint_id: 1, name: null }], history_days: 90, publish_automatic_incidents: false };
  const created = () => {
    const decision = decide(initialState(), { kind: 'create', page_id: 1, team_id: 7, fields, at: '2026-01-01T00:00:00.000Z' });
    if (!decision.ok) throw new Error('refused');
    return decision.events.reduce(evolve, initialState());
  };

  test('an update with the values already set appends nothing; another team is not found', () => {
    expect(decide(created(), { kind: 'update', team_id: 7, patch: { title: 'A', components: [{ endpoint_id: 1, name: null }] }, at: 'x' })).toEqual({ ok: true, events: [] });
    expect(decide(created(), { kind: 'update', team_id: 8, patch: { title: 'B' }, at: 'x' })).toEqual({ ok: false, reason: 'not_found' });
  });

  test('a deleted page refuses every later command', () => {
    const deletion = decide(created(), { kind: 'delete', team_id: 7, at: '2026-01-02T00:00:00.000Z' });
    if (!deletion.ok) throw new Error('refused');
    const deleted = deletion.events.reduce(evolve, created());
    expect(decide(deleted, { kind: 'update', team_id: 7, patch: { title: 'B' }, at: 'x' })).toEqual({ ok: false, reason: 'not_found' });
    expect(decide(deleted, { kind: 'delete', team_id: 7, at: 'x' })).toEqual({ ok: false, reason: 'not_found' });
  });
});

describe('state rules', () => {
  test.each([
    ['Identified', 'identified'],
    ['  MONITORING ', 'monitoring'],
    ['investigating', 'investigating'],
    ['Resolved', 'investigating'],
    ['Fix deployed', 'investigating'],
  ])('checkpoint label %p maps to %p', (label, status) => expect(updateStatus(label)).toBe(status));

  test('maintenance, then outage, then degradation', () => {
    const signals = { availability: 'x', latency: 'x' };
    expect(componentStatus({ underMaintenance: true, openSeverities: ['critical'], signals })).toBe('under_maintenance');
    expect(componentStatus({ underMaintenance: false, openSeverities: ['warning'], signals })).toBe('major_outage');
    expect(componentStatus({ underMaintenance: false, openSeverities: ['warning'], signals: undefined })).toBe('degraded_performance');
    expect(componentStatus({ underMaintenance: false, openSeverities: [], signals: { availability: null, latency: 'x' } })).toBe('degraded_performance');
    expect(componentStatus({ underMaintenance: false, openSeverities: [], signals: undefined })).toBe('operational');
  });

  test('indicator: none, minor, major, critical only when more than half are out', () => {
    expect(pageIndicator([], [])).toBe('none');
    expect(pageIndicator(['operational', 'under_maintenance'], [])).toBe('none');
    expect(pageIndicator(['operational', 'degraded_performance'], [])).toBe('minor');
    expect(pageIndicator(['major_outage', 'operational'], [])).toBe('major');
    expect(pageIndicator(['major_outage', 'major_outage', 'operational'], [])).toBe('critical');
  });

  test('indicator: at least the impact of the worst incident listed, never lowered by one', () => {
    expect(pageIndicator(['under_maintenance'], ['major'])).toBe('major');
    expect(pageIndicator(['under_maintenance', 'operational'], ['minor', 'major', 'minor'])).toBe('major');
    expect(pageIndicator([], ['minor'])).toBe('minor');
    expect(pageIndicator(['major_outage', 'major_outage', 'operational'], ['minor'])).toBe('critical');
    expect(pageIndicator(['degraded_performance'], ['minor'])).toBe('minor');
  });
});

describe('the model says until when it is exact', () => {
  const inputs = (now: number, windows: StatusInputs['windows']): StatusInputs => ({
    page: { page_id: 1, team_id: 1, slug: 's', title: 'S', description: '', components: [{ endpoint_id: 1, name: null }], history_days: 90, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' },
    url: 'https://x/status/s',
    endpoints: new Map([[1, { endpoint_id: 1, team_id: 1, project_id: 1, name: 'E', maintenance_until: null, enabled: true, depends_on: [] }]]),
    windows,
    incidents: [],
    signals: new Map(),
    now,
  });

  test('until the next window edge or UTC midnight, whichever comes first', () => {
    const now = Date.parse('2026-11-20T10:00:00.000Z');
    expect(buildStatusModel(inputs(now, [])).validUntil).toBe(Date.parse('2026-11-21T00:00:00.000Z'));
    const window = { window_id: 1, team_id: 1, project_id: null, endpoint_id: 1, starts_at: '2026-11-20T10:30:00.000Z', ends_at: '2026-11-20T11:00:00.000Z' };
    const before = buildStatusModel(inputs(now, [window]));
    expect(before.validUntil).toBe(Date.parse(window.starts_at));
    expect(before.summary.components[0].status).toBe('operational');
    const during = buildStatusModel(inputs(Date.parse(window.starts_at), [window]));
    expect(during.summary.components[0].status).toBe('under_maintenance');
    expect(during.validUntil).toBe(Date.parse(window.ends_at));
  });

  test('an open certificate_expiry warning neither degrades the component nor shows as an incident', () => {
    const now = Date.parse('2026-11-20T10:00:00.000Z');
    const incident = { id: 7, team_id: 1, endpoint_ids: [1], title: 'E: TLS certificate expires soon', severity: 'warning' as const, source: 'automatic' as const, created_at: '2026-11-20T09:00:00.000Z', resolved_at: null, merged_into_id: null, checkpoints: [] };
    const certificate = buildStatusModel({ ...inputs(now, []), incidents: [{ ...incident, type: 'certificate_expiry' }] });
    expect(certificate.summary.components[0].status).toBe('operational');
    expect(certificate.incidents).toEqual([]);
    const latency = buildStatusModel({ ...inputs(now, []), incidents: [{ ...incident, type: 'latency' }] });
    expect(latency.summary.components[0].status).toBe('degraded_performance');
  });

  test('feed titles: "<title> status", without doubling a title that already ends in "status"', () => {
    const now = Date.parse('2026-11-20T12:00:00.000Z');
    const titled = (title: string) => buildStatusModel({ ...inputs(now, []), page: { ...inputs(now, []).page, title } });
    expect(renderAtom(titled('Acme Status'))).toContain('<title>Acme Status</title>');
    expect(renderRss(titled('Acme status'))).toContain('<title>Acme status</title>');
    expect(renderAtom(titled('Acme'))).toContain('<title>Acme status</title>');
    expect(renderAtom(titled('Statuses of Acme'))).toContain('<title>Statuses of Acme status</title>');
  });

  test('the resolution update sits at its time: a checkpoint posted after it (a postmortem) is newer', () => {
    const now = Date.parse('2026-11-20T12:00:00.000Z');
    const checkpoint = (id: number, at: string) => ({ id, title: `cp${id}`, body: '', status_label: 'monitoring', created_at: at, updated_at: at });
    const incident = {
      id: 7, team_id: 1, endpoint_ids: [1], title: 'Down', severity: 'critical' as const, source: 'manual' as const, created_at: '2026-11-20T09:00:00.000Z',
      resolved_at: '2026-11-20T10:00:00.000Z', merged_into_id: null,
      checkpoints: [checkpoint(1, '2026-11-20T09:30:00.000Z'), checkpoint(2, '2026-11-20T11:00:00.000Z')],
    };
    const model = buildStatusModel({ ...inputs(now, []), incidents: [incident] });
    expect(model.incidents[0].incident_updates.map((u) => [u.id, u.status])).toEqual([['2', 'monitoring'], ['resolved-7', 'resolved'], ['1', 'monitoring']]);
    expect(model.incidents[0].status).toBe('resolved');
  });

  describe('an automatic incident held open because its endpoint flaps', () => {
    const now = Date.parse('2026-11-20T12:00:00.000Z');
    const flapping = {
      id: 9, team_id: 1, endpoint_ids: [1], title: 'E is down', severity: 'critical' as const, source: 'automatic' as const, type: 'availability',
      created_at: '2026-11-20T11:00:00.000Z', resolved_at: null, merged_into_id: null, checkpoints: [], flapping: true,
    };
    const recoveredAt = '2026-11-20T11:40:00.000Z';
    const held = (publish: boolean, signals: StatusInputs['signals']) =>
      buildStatusModel({ ...inputs(now, []), page: { ...inputs(now, []).page, publish_automatic_incidents: publish }, incidents: [flapping], signals });
    const recovered = new Map([[1, { availability: null, latency: null, availability_recovered_at: recoveredAt }]]);

    test('its signal recovered: degraded, with a generated "monitoring" update dated at the recovery; triggered again: a major outage', () => {
      const model = held(true, recovered);
      expect(model.summary.components[0].status).toBe('degraded_performance');
      expect(model.summary.status.indicator).toBe('minor');
      // A critical incident held open only by flapping is listed with the impact the indicator counts.
      expect(model.summary.incidents[0].impact).toBe('minor');
      expect(model.summary.incidents[0].status).toBe('monitoring');
      expect(model.summary.incidents[0].updated_at).toBe(recoveredAt);
      expect(model.summary.incidents[0].incident_updates.map((u) => [u.id, u.status, u.created_at])).toEqual([
        [`recovered-9-${Date.parse(recoveredAt)}`, 'monitoring', recoveredAt],
        ['auto-9', 'investigating', flapping.created_at],
      ]);
      expect(renderAtom(model)).toContain('E is down: Recovered, monitoring');
      const again = held(true, new Map([[1, { availability: '2026-11-20T11:50:00.000Z', latency: null, availability_recovered_at: null }]]));
      expect(again.summary.components[0].status).toBe('major_outage');
      expect(again.summary.incidents[0].impact).toBe('major');
      expect(again.summary.status.indicator).toBe('critical');
      expect(again.summary.incidents[0].incident_updates.map((u) => u.id)).toEqual(['auto-9']);
      expect(again.summary.incidents[0].status).toBe('investigating');
    });

    test('not flapping (or a recovery older than the incident): a major outage as before', () => {
      expect(buildStatusModel({ ...inputs(now, []), incidents: [{ ...flapping, flapping: false }], signals: recovered }).summary.components[0].status).toBe('major_outage');
      const older = new Map([[1, { availability: null, latency: null, availability_recovered_at: '2026-11-20T10:00:00.000Z' }]]);
      expect(held(true, older).summary.components[0].status).toBe('major_outage');
    });

    test('on a page that does not publish automatic incidents the notice says it recovered and is watched', () => {
      const model = held(false, recovered);
      expect(model.summary.components[0].status).toBe('degraded_performance');
      expect(model.summary.incidents).toEqual([]);
      expect(model.notices).toEqual([expect.objectContaining({ kind: 'recovered', since: recoveredAt, text: 'Recovered at 11:40 UTC; monitoring, as it has been unstable.' })]);
      const atom = renderAtom(model);
      expect(atom).toContain('E: recovered, monitoring');
      expect(atom).toContain(`#component-1-recovered-${recoveredAt}`);
    });
  });

  test('a reopened incident: each resolution and reopening is an update of its own, by time, with ids of their own', () => {
    const incident = {
      id: 7, team_id: 1, endpoint_ids: [1], title: 'Down', severity: 'critical' as const, source: 'manual' as const, created_at: '2026-11-20T09:00:00.000Z',
      resolved_at: null as string | null, merged_into_id: null,
      checkpoints: [{ id: 1, title: 'Fixed', body: '', status_label: 'monitoring', created_at: '2026-11-20T09:30:00.000Z', updated_at: '2026-11-20T09:30:00.000Z' }],
      reopenings: [{ n: 1, resolved_at: '2026-11-20T10:00:00.000Z', reopened_at: '2026-11-20T10:30:00.000Z' }],
    };
    const open = buildStatusModel({ ...inputs(Date.parse('2026-11-20T11:00:00.000Z'), []), incidents: [incident] }).incidents[0];
    expect(open.incident_updates.map((u) => [u.id, u.status, u.title])).toEqual([
      ['reopened-7-1', 'investigating', 'Reopened'],
      ['resolved-7', 'resolved', 'Resolved'],
      ['1', 'monitoring', 'Fixed'],
    ]);
    expect(open.status).toBe('investigating');
    expect(open.updated_at).toBe('2026-11-20T10:30:00.000Z');
    const again = buildStatusModel({ ...inputs(Date.parse('2026-11-20T12:00:00.000Z'), []), incidents: [{ ...incident, resolved_at: '2026-11-20T11:30:00.000Z' }] }).incidents[0];
    expect(again.incident_updates.map((u) => u.id)).toEqual(['resolved-7-2', 'reopened-7-1', 'resolved-7', '1']);
    expect(again.status).toBe('resolved');
  });
});

describe('a dependent during planned work on its parent', () => {
  const now = Date.parse('2026-11-20T10:00:00.000Z');
  const endpoint = (endpoint_id: number, extra: Partial<EndpointInput> = {}): EndpointInput => ({
    endpoint_id,
    team_id: 1,
    project_id: 1,
    name: `E${endpoint_id}`,
    maintenance_until: null,
    enabled: true,
    depends_on: [],
    ...extra,
  });
  const window = { window_id: 9, team_id: 1, project_id: null, endpoint_id: 2, starts_at: '2026-11-20T09:00:00.000Z', ends_at: '2026-11-20T11:00:00.000Z' };
  const failing = { availability: null, latency: null, failing_in_maintenance_since: '2026-11-20T09:30:00.000Z' };
  // The page shows only the dependent (1); its parent (2) is off the page.
  const inputs = (parent: EndpointInput, windows = [window], at = now): StatusInputs => ({
    page: { page_id: 1, team_id: 1, slug: 's', title: 'S', description: '', components: [{ endpoint_id: 1, name: null }], history_days: 90, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' },
    url: 'https://x/status/s',
    endpoints: new Map([[1, endpoint(1, { depends_on: [2] })], [2, parent]]),
    windows,
    incidents: [],
    signals: new Map([[2, failing]]),
    now: at,
  });

  test('under maintenance while its parent is and fails during it; the window is listed with it and bounds the model', () => {
    const model = buildStatusModel(inputs(endpoint(2)));
    expect(model.summary.components[0]).toMatchObject({ status: 'under_maintenance', updated_at: failing.failing_in_maintenance_since });
    expect(model.summary.scheduled_maintenances.map((m) => [m.id, m.status, m.components.map((c) => c.id)])).toEqual([['9', 'in_progress', ['1']]]);
    expect(model.validUntil).toBe(Date.parse(window.ends_at));
  });

  test('operational once the window is over (the parent still failing), and when the parent is disabled, of another team or recovered', () => {
    const after = Date.parse(window.ends_at) + 1;
    expect(buildStatusModel(inputs(endpoint(2), [window], after)).summary.components[0].status).toBe('operational');
    expect(buildStatusModel(inputs(endpoint(2), [window], after)).summary.scheduled_maintenances).toEqual([]);
    expect(buildStatusModel(inputs(endpoint(2, { enabled: false }))).summary.components[0].status).toBe('operational');
    expect(buildStatusModel(inputs(endpoint(2, { team_id: 5 }))).summary.components[0].status).toBe('operational');
    const recovered = { ...inputs(endpoint(2)), signals: new Map([[2, { ...failing, failing_in_maintenance_since: null }]]) };
    expect(buildStatusModel(recovered).summary.components[0].status).toBe('operational');
  });

  test('a parent triggered before its window suppresses as a down parent does, not as planned work: the dependent stays its own', () => {
    const triggered = { ...inputs(endpoint(2)), signals: new Map([[2, { availability: '2026-11-20T08:00:00.000Z', latency: null, failing_in_maintenance_since: null }]]) };
    expect(buildStatusModel(triggered).summary.components[0].status).toBe('operational');
  });
});

describe('settings', () => {
  // Imported here, not at the top, to keep the domain tests free of the platform.
  const load = async (env: Record<string, string>) => (await import('../../../src/platform/config/config.js')).loadConfig(env);

  test('PUBLIC_BASE_URL defaults to http://HOST:PORT and loses a trailing slash', async () => {
    expect((await load({ HOST: '0.0.0.0', PORT: '8080' })).publicBaseUrl).toBe('http://0.0.0.0:8080');
    expect((await load({ PUBLIC_BASE_URL: 'https://status.example.com/' })).publicBaseUrl).toBe('https://status.example.com');
  });

  test('STATUS_PAGE_RATE_LIMIT_PER_MINUTE defaults to 600; bad values stop the process with their names', async () => {
    expect((await load({})).statusPageRateLimitPerMinute).toBe(600);
    await expect(load({ STATUS_PAGE_RATE_LIMIT_PER_MINUTE: '0', PUBLIC_BASE_URL: 'ftp://x' })).rejects.toThrow(/STATUS_PAGE_RATE_LIMIT_PER_MINUTE[\s\S]*PUBLIC_BASE_URL/);
  });
});
