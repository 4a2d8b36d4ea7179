import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { addCheckpoint, createPage, openIncident, statusTeam } from '../support/status-page-fixtures.js';
import { startedBeforeAll } from '../support/started-before-all.js';
import { startTestApp } from '../support/test-app.js';

/**
 * The Atlassian Statuspage v2 shapes (`/api/v2/summary.json`, `/api/v2/incidents.json`), field by
 * field as the issue fixes them, closed (`additionalProperties: false`) so that a renamed or
 * stray field fails. The one additive field allowed is `incident_updates[].title`.
 */
const timestamp = { type: 'string', format: 'date-time', pattern: 'Z$' };
const nullableTimestamp = { anyOf: [timestamp, { type: 'null' }] };
const id = { type: 'string', minLength: 1 };
const closed = (properties: Record<string, unknown>) => ({ type: 'object', properties, required: Object.keys(properties), additionalProperties: false });

const page = closed({ id, name: { type: 'string' }, url: { type: 'string', format: 'uri', pattern: '^https?://' }, time_zone: { type: 'string' }, updated_at: timestamp });
const component = closed({
  id,
  name: { type: 'string' },
  status: { enum: ['operational', 'degraded_performance', 'partial_outage', 'major_outage', 'under_maintenance'] },
  created_at: timestamp,
  updated_at: timestamp,
  position: { type: 'integer', minimum: 1 },
  description: { type: ['string', 'null'] },
  group_id: { type: 'null' },
  only_show_if_degraded: { const: false },
});
const update = closed({
  id,
  status: { enum: ['investigating', 'identified', 'monitoring', 'resolved'] },
  body: { type: 'string', minLength: 1 },
  title: { type: 'string' },
  created_at: timestamp,
  updated_at: timestamp,
  display_at: timestamp,
});
const incident = closed({
  id,
  name: { type: 'string' },
  status: { enum: ['investigating', 'identified', 'monitoring', 'resolved'] },
  impact: { enum: ['none', 'minor', 'major', 'critical'] },
  created_at: timestamp,
  updated_at: timestamp,
  resolved_at: nullableTimestamp,
  shortlink: { type: 'string', format: 'uri' },
  components: { type: 'array', items: component },
  incident_updates: { type: 'array', items: update, minItems: 1 },
});
const maintenance = closed({
  id,
  name: { type: 'string' },
  status: { enum: ['scheduled', 'in_progress', 'completed'] },
  scheduled_for: timestamp,
  scheduled_until: timestamp,
  components: { type: 'array', items: component },
  incident_updates: { type: 'array', maxItems: 0 },
});
const summarySchema = closed({
  page,
  status: closed({ indicator: { enum: ['none', 'minor', 'major', 'critical'] }, description: { type: 'string', minLength: 1 } }),
  components: { type: 'array', items: component },
  incidents: { type: 'array', items: incident },
  scheduled_maintenances: { type: 'array', items: maintenance },
});
const incidentsSchema = closed({ page, incidents: { type: 'array', items: incident, maxItems: 50 } });

const ajv = new Ajv2020({ allErrors: true, strict: true });
(addFormatsModule as unknown as (a: Ajv2020) => void)(ajv);
const validSummary = ajv.compile(summarySchema);
const validIncidents = ajv.compile(incidentsSchema);

function expectValid(validate: typeof validSummary, data: unknown): void {
  if (!validate(data)) throw new Error(ajv.errorsText(validate.errors, { separator: '\n' }));
}

describe('status pages: the Statuspage v2 shape', () => {
  const world = startedBeforeAll(async () => ({ t: await startTestApp({ PUBLIC_BASE_URL: 'https://status.example.com' }) }), (w) => w.t.close());

  test('summary.json and incidents.json match the schema field by field, with consistent cross references', async () => {
    const { t } = world;
    const team = await statusTeam(t, 3, 'Shape');
    await createPage(t, team.teamId, { slug: 'shape', title: 'Shape', components: team.endpoints.map((endpoint_id) => ({ endpoint_id })) });
    const now = Date.now();
    await t.admin('POST', `/api/v2/teams/${team.teamId}/maintenance-windows`, { endpoint_id: team.endpoints[2], starts_at: new Date(now + 3_600_000).toISOString(), ends_at: new Date(now + 7_200_000).toISOString(), reason: 'Upgrade' });
    for (let i = 0; i < 52; i++) {
      const created = await openIncident(t, team, { endpoint_ids: [team.endpoints[i % 2]], severity: i % 2 ? 'critical' : 'warning', title: `Incident ${i}` });
      await addCheckpoint(t, team, created.id, { title: `Update ${i}`, body: i % 3 ? `Body ${i}` : '' });
    }

    const summary: any = (await t.request('GET', '/status/shape/summary.json')).json();
    expectValid(validSummary, summary);
    expect(summary.page).toEqual({ id: expect.any(String), name: 'Shape', url: 'https://status.example.com/status/shape', time_zone: 'Etc/UTC', updated_at: expect.any(String) });
    expect(summary.components.map((c: any) => c.position)).toEqual([1, 2, 3]);
    expect(summary.components.map((c: any) => c.id)).toEqual(team.endpoints.map(String));
    expect(summary.incidents).toHaveLength(52);
    expect(summary.scheduled_maintenances).toHaveLength(1);
    for (const item of summary.incidents) {
      expect(item.shortlink).toBe(`${summary.page.url}#incident-${item.id}`);
      expect(item.impact).toBe(Number(item.name.split(' ')[1]) % 2 ? 'major' : 'minor');
      for (const c of item.components) expect(summary.components).toContainEqual(c);
      for (const u of item.incident_updates) expect(u.body).toBe(Number(item.name.split(' ')[1]) % 3 ? `Body ${item.name.split(' ')[1]}` : u.title);
    }

    const response = await t.request('GET', '/status/shape/incidents.json');
    const listed: any = response.json();
    expectValid(validIncidents, listed);
    expect(listed.incidents).toHaveLength(50);
    expect(listed.incidents[0].name).toBe('Incident 51');
    expect(listed.incidents[49].name).toBe('Incident 2');
    expect(listed.page).toEqual(summary.page);
    // Feeds: one entry per checkpoint, at most 50, the newest first.
    const atom = (await t.request('GET', '/status/shape/feed.atom')).body;
    const titles = [...atom.matchAll(/<entry>\s*<title[^>]*><!\[CDATA\[([^\]]+)\]\]><\/title>/g)].map((m) => m[1]);
    expect(titles).toHaveLength(50);
    expect(titles[0]).toBe('Incident 51: Update 51');
    expect(titles[49]).toBe('Incident 2: Update 2');
    expect((await t.request('GET', '/status/shape/feed.rss')).body.match(/<item>/g)).toHaveLength(50);
  });

  test('the schema is strict: a stray field or a numeric id fails it', () => {
    const sample = {
      page: { id: '1', name: 'x', url: 'https://a.example/status/x', time_zone: 'Etc/UTC', updated_at: '2026-01-01T00:00:00.000Z' },
      status: { indicator: 'none', description: 'All Systems Operational' },
      components: [],
      incidents: [],
      scheduled_maintenances: [],
    };
    expect(validSummary(sample)).toBe(true);
    expect(validSummary({ ...sample, page: { ...sample.page, id: 1 } })).toBe(false);
    expect(validSummary({ ...sample, extra: true })).toBe(false);
  });
});
