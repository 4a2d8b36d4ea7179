import { startedBeforeAll } from '../support/started-before-all.js';
import { createPage, pagesPath, statusTeam, type StatusTeam } from '../support/status-page-fixtures.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

function fields(response: { json(): any }): string[] {
  return response
    .json()
    .errors.map((e: { field: string; code: string }) => `${e.field}:${e.code}`)
    .sort();
}

describe('status pages: application API', () => {
  const world = startedBeforeAll(
    async () => {
      const t = await startTestApp({ PUBLIC_BASE_URL: 'https://status.example.com/' });
      return { t, a: await statusTeam(t, 3, 'Acme'), b: await statusTeam(t, 1, 'Other') };
    },
    (w) => w.t.close(),
  );
  let t: TestApp;
  let a: StatusTeam;
  let b: StatusTeam;
  beforeAll(() => ({ t, a, b } = world));

  test('create answers 201 with the page, its defaults and its public URL; GET one returns the same', async () => {
    const response = await t.admin('POST', pagesPath(a.teamId), {
      slug: 'acme-shop',
      title: 'Acme Shop',
      components: [{ endpoint_id: a.endpoints[1], name: 'Checkout' }, { endpoint_id: a.endpoints[0] }],
    });
    expect(response.statusCode).toBe(201);
    const page = response.json().data;
    expect(page).toEqual({
      id: expect.any(Number),
      team_id: a.teamId,
      slug: 'acme-shop',
      title: 'Acme Shop',
      description: '',
      components: [
        { endpoint_id: a.endpoints[1], name: 'Checkout' },
        { endpoint_id: a.endpoints[0], name: null },
      ],
      history_days: 90,
      publish_automatic_incidents: false,
      url: 'https://status.example.com/status/acme-shop',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: page.created_at,
    });
    expect(response.headers.location).toBe(pagesPath(a.teamId, page.id));
    const one = await t.admin('GET', pagesPath(a.teamId, page.id));
    expect(one.statusCode).toBe(200);
    expect(one.json().data).toEqual(page);
    expect((await t.request('GET', '/status/acme-shop')).statusCode).toBe(200);
  });

  test('list pages through cursors, only the team\'s own pages', async () => {
    await createPage(t, a.teamId, { slug: 'acme-list-1', title: 'L1', components: [] });
    await createPage(t, a.teamId, { slug: 'acme-list-2', title: 'L2', components: [] });
    await createPage(t, b.teamId, { slug: 'other-list', title: 'Other', components: [] });
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const response = await t.admin('GET', `${pagesPath(a.teamId)}?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body.data).toHaveLength(1);
      seen.push(body.data[0].slug);
      expect(body.pagination.has_more).toBe(body.pagination.next_cursor !== null);
      cursor = body.pagination.next_cursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(expect.arrayContaining(['acme-list-1', 'acme-list-2']));
    expect(seen).not.toContain('other-list');
    expect((await t.admin('GET', `${pagesPath(a.teamId)}?cursor=forged.cursor`)).json().code).toBe('invalid_cursor');
    expect((await t.admin('GET', `${pagesPath(a.teamId)}?limit=0`)).json().code).toBe('validation_failed');
  });

  test('patch changes the fields sent; an empty patch is 400; the public page follows a new slug', async () => {
    const page = await createPage(t, a.teamId, { slug: 'acme-patch', title: 'Before', components: [{ endpoint_id: a.endpoints[0] }] });
    const response = await t.admin('PATCH', pagesPath(a.teamId, page.id), { slug: 'acme-patched', title: 'After', history_days: 30, description: 'All our services' });
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toMatchObject({ slug: 'acme-patched', title: 'After', history_days: 30, description: 'All our services', url: 'https://status.example.com/status/acme-patched' });
    expect(response.json().data.updated_at > page.updated_at).toBe(true);
    expect((await t.request('GET', '/status/acme-patched/summary.json')).json().page.name).toBe('After');
    expect((await t.request('GET', '/status/acme-patch/summary.json')).statusCode).toBe(404);
    const empty = await t.admin('PATCH', pagesPath(a.teamId, page.id), {});
    expect(empty.statusCode).toBe(400);
    expect(empty.json().code).toBe('validation_failed');
    // The old slug is free again.
    await createPage(t, b.teamId, { slug: 'acme-patch', title: 'Reuse', components: [] });
  });

  test('delete answers 204; the page is gone (404 everywhere) and its slug free', async () => {
    const page = await createPage(t, a.teamId, { slug: 'acme-delete', title: 'Gone soon', components: [] });
    const response = await t.admin('DELETE', pagesPath(a.teamId, page.id));
    expect(response.statusCode).toBe(204);
    expect(response.body).toBe('');
    expect((await t.admin('GET', pagesPath(a.teamId, page.id))).statusCode).toBe(404);
    expect((await t.admin('DELETE', pagesPath(a.teamId, page.id))).statusCode).toBe(404);
    expect((await t.admin('PATCH', pagesPath(a.teamId, page.id), { title: 'x' })).statusCode).toBe(404);
    expect((await t.request('GET', '/status/acme-delete')).statusCode).toBe(404);
    const again = await createPage(t, a.teamId, { slug: 'acme-delete', title: 'Back', components: [] });
    expect(again.id).not.toBe(page.id);
  });

  test.each([
    ['upper case', 'Acme'],
    ['underscore', 'acme_shop'],
    ['space', 'acme shop'],
    ['empty', ''],
    ['65 characters', 'a'.repeat(65)],
    ['a dot', 'acme.json'],
  ])('slug rules: %s is 400 invalid_value', async (_, slug) => {
    const response = await t.admin('POST', pagesPath(a.teamId), { slug, title: 'x', components: [] });
    expect(response.statusCode).toBe(400);
    expect(fields(response)).toEqual(['slug:invalid_value']);
  });

  test('slug rules: 64 characters of a-z, 0-9 and - are accepted', async () => {
    const slug = `0-${'z'.repeat(62)}`;
    expect((await createPage(t, a.teamId, { slug, title: 'x', components: [] })).slug).toBe(slug);
  });

  test('a slug is unique across the service: 409 slug_taken on create (any team) and on patch', async () => {
    await createPage(t, a.teamId, { slug: 'taken', title: 'First', components: [] });
    for (const team of [a, b]) {
      const response = await t.admin('POST', pagesPath(team.teamId), { slug: 'taken', title: 'Second', components: [] });
      expect(response.statusCode).toBe(409);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.json().code).toBe('slug_taken');
    }
    const other = await createPage(t, b.teamId, { slug: 'not-taken', title: 'B', components: [] });
    const patch = await t.admin('PATCH', pagesPath(b.teamId, other.id), { slug: 'taken' });
    expect(patch.statusCode).toBe(409);
    expect(patch.json().code).toBe('slug_taken');
    // Nothing changed: the refused page keeps its slug, the holder keeps its page.
    expect((await t.admin('GET', pagesPath(b.teamId, other.id))).json().data.slug).toBe('not-taken');
    expect((await t.request('GET', '/status/taken/summary.json')).json().page.name).toBe('First');
    // Patching a page to the slug it has is not a conflict.
    expect((await t.admin('PATCH', pagesPath(b.teamId, other.id), { slug: 'not-taken', title: 'B2' })).statusCode).toBe(200);
  });

  test('concurrent creates of one slug: exactly one wins', async () => {
    const responses = await Promise.all(
      [a, b, a, b].map((team, i) => t.admin('POST', pagesPath(team.teamId), { slug: 'race', title: `Racer ${i}`, components: [] })),
    );
    expect(responses.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409]);
  });

  test('a component naming an endpoint of another team is 400 validation_failed (not_found), like an unknown one', async () => {
    const response = await t.admin('POST', pagesPath(a.teamId), {
      slug: 'cross-team',
      title: 'x',
      components: [{ endpoint_id: a.endpoints[0] }, { endpoint_id: b.endpoints[0] }, { endpoint_id: 999_999 }],
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe('validation_failed');
    expect(fields(response)).toEqual(['components[1].endpoint_id:not_found', 'components[2].endpoint_id:not_found']);
    expect((await t.request('GET', '/status/cross-team')).statusCode).toBe(404);
    const page = await createPage(t, a.teamId, { slug: 'cross-team-patch', title: 'x', components: [] });
    const patch = await t.admin('PATCH', pagesPath(a.teamId, page.id), { components: [{ endpoint_id: b.endpoints[0] }] });
    expect(patch.statusCode).toBe(400);
    expect(fields(patch)).toEqual(['components[0].endpoint_id:not_found']);
  });

  test('every field rule is listed in one 400', async () => {
    const response = await t.admin('POST', pagesPath(a.teamId), {
      title: '',
      description: 'd'.repeat(2001),
      components: [{ endpoint_id: a.endpoints[0] }, { endpoint_id: a.endpoints[0] }, { endpoint_id: '1', name: '' }],
      history_days: 91,
      extra: true,
    });
    expect(response.statusCode).toBe(400);
    expect(fields(response)).toEqual(
      expect.arrayContaining([
        'slug:required',
        'title:too_short',
        'description:too_long',
        'components:not_unique',
        'components[2].endpoint_id:invalid_type',
        'components[2].name:too_short',
        'history_days:out_of_range',
        'extra:unknown_field',
      ]),
    );
  });

  test('order of checks: 401 without the admin token, then 404 for the path whatever the body, then the body', async () => {
    const page = await createPage(t, a.teamId, { slug: 'order', title: 'x', components: [] });
    expect((await t.request('POST', pagesPath(a.teamId), { body: { slug: 'x' } })).statusCode).toBe(401);
    expect((await t.request('GET', pagesPath(a.teamId), { token: a.token })).statusCode).toBe(401);
    expect((await t.admin('POST', pagesPath(999_999), { bad: true })).statusCode).toBe(404);
    expect((await t.admin('PATCH', pagesPath(b.teamId, page.id), { bad: true })).statusCode).toBe(404);
    expect((await t.admin('GET', pagesPath(b.teamId, page.id))).statusCode).toBe(404);
    expect((await t.admin('DELETE', pagesPath(b.teamId, page.id))).statusCode).toBe(404);
    expect((await t.admin('GET', `${pagesPath(a.teamId)}/abc`)).statusCode).toBe(404);
    expect((await t.admin('PATCH', pagesPath(a.teamId, page.id), { bad: true })).statusCode).toBe(400);
    expect((await t.admin('PUT', pagesPath(a.teamId, page.id), {})).statusCode).toBe(405);
    // The page was not changed or deleted by any of it.
    expect((await t.admin('GET', pagesPath(a.teamId, page.id))).json().data.title).toBe('x');
  });

  test('Idempotency-Key replays the first create', async () => {
    const send = (title: string) =>
      t.request('POST', pagesPath(a.teamId), { token: 'test-admin-token-0123456789', body: { slug: 'idem', title, components: [] }, headers: { 'idempotency-key': 'create-idem' } });
    const first = await send('Idem');
    const second = await send('Idem');
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.json().data.id).toBe(first.json().data.id);
    expect((await send('Other body')).statusCode).toBe(422);
  });
});
