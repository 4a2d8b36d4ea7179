/**
 * The contract's List incidents query: "A status can be referenced in incident requests by its id
 * (`status_id`) or exact name (`status`)". The list took only `status_id` and ignored `status` as
 * an unknown parameter, so `?status=Identified` answered every incident as if it had filtered.
 */
import { appWithIncidentTeam, createIncident, INCIDENTS } from '../support/incident-fixtures.js';

describe('GET /incidents?status=<name>', () => {
  const { t, f } = appWithIncidentTeam();
  const ids = { identified: 0, investigating: 0 };

  beforeAll(async () => {
    ids.investigating = (await createIncident(t, f, { title: 'still looking' })).id;
    ids.identified = (await createIncident(t, f, { title: 'found it', status: 'Identified' })).id;
  });

  const list = async (query: string) => {
    const response = await t.request('GET', `${INCIDENTS}?${query}`, { token: f.editor });
    return { status: response.statusCode, body: response.json() };
  };

  it('filters by the exact status name, as status_id does by id', async () => {
    const byName = await list('status=Identified');
    expect(byName.status).toBe(200);
    expect(byName.body.data.map((incident: { id: number }) => incident.id)).toEqual([ids.identified]);
    const statusId = byName.body.data[0].status_id;
    expect((await list(`status_id=${statusId}`)).body.data).toEqual(byName.body.data);
    expect((await list('status=Investigating')).body.data.map((incident: { id: number }) => incident.id)).toEqual([ids.investigating]);
  });

  it('a name no status has (names match exactly) lists nothing, as an unknown status_id does', async () => {
    expect((await list('status=identified')).body).toEqual({ data: [], pagination: { next_cursor: null, has_more: false } });
    expect((await list('status_id=99999')).body).toEqual({ data: [], pagination: { next_cursor: null, has_more: false } });
  });

  it('status with status_id is a 400 conflict, listed with the other query errors', async () => {
    const both = await list('status=Identified&status_id=1&limit=0');
    expect(both.status).toBe(400);
    expect(both.body.errors.map((e: { field: string; code: string }) => `${e.field}:${e.code}`).sort()).toEqual(['limit:out_of_range', 'status:conflict']);
  });

  it('pages with a cursor bound to the name filter', async () => {
    await createIncident(t, f, { title: 'found another', status: 'Identified' });
    const first = await list('status=Identified&limit=1');
    expect(first.body.pagination.has_more).toBe(true);
    const second = await list(`status=Identified&limit=1&cursor=${encodeURIComponent(first.body.pagination.next_cursor)}`);
    expect(second.body.data.map((incident: { id: number }) => incident.id)).toEqual([ids.identified]);
    const other = await list(`status=Investigating&limit=1&cursor=${encodeURIComponent(first.body.pagination.next_cursor)}`);
    expect([other.status, other.body.code]).toEqual([400, 'invalid_cursor']);
  });
});
