/** The status-pages view, given events: what the admin routes list and the public routes find by slug. */
import { statusPagesProjection } from '../../../src/statuspages/views/status-pages/projection.js';
import { STATUS_PAGES_COLLECTION, type StatusPageDoc } from '../../../src/statuspages/views/status-pages/view.js';
import { given } from '../../support/projection-spec.js';

const T0 = '2026-11-23T10:00:00.000Z';
const T1 = '2026-11-23T11:00:00.000Z';

const created = (page_id: number, slug: string) => ({
  type: 'StatusPageCreated',
  streamId: `status-page-${page_id}`,
  data: { page_id, team_id: 1, slug, title: 'Acme status', description: '', components: [{ endpoint_id: 5, name: null }], history_days: 30, created_at: T0 },
});

describe('status-pages projection', () => {
  it('keeps one document per page with its slug, components and times', async () => {
    const views = await given(statusPagesProjection, [created(3, 'acme')]);
    const page: StatusPageDoc = { id: '3', page_id: 3, team_id: 1, slug: 'acme', title: 'Acme status', description: '', components: [{ endpoint_id: 5, name: null }], history_days: 30, publish_automatic_incidents: false, created_at: T0, updated_at: T0 };
    expect(views.documents(STATUS_PAGES_COLLECTION)).toEqual([page]);
  });

  it('applies an update (a new slug included) to the fields it names only', async () => {
    const views = await given(statusPagesProjection, [
      created(3, 'acme'),
      { type: 'StatusPageUpdated', streamId: 'status-page-3', data: { page_id: 3, team_id: 1, changes: { slug: 'acme-shop', components: [{ endpoint_id: 6, name: 'Shop' }] }, updated_at: T1 } },
    ]);
    expect(views.document(STATUS_PAGES_COLLECTION, '3')).toMatchObject({ slug: 'acme-shop', title: 'Acme status', components: [{ endpoint_id: 6, name: 'Shop' }], created_at: T0, updated_at: T1 });
  });

  it('removes a deleted page and leaves the others', async () => {
    const views = await given(statusPagesProjection, [
      created(3, 'acme'),
      created(4, 'beta'),
      { type: 'StatusPageDeleted', streamId: 'status-page-3', data: { page_id: 3, team_id: 1, slug: 'acme', deleted_at: T1 } },
    ]);
    expect(views.documents(STATUS_PAGES_COLLECTION).map((doc) => doc.slug)).toEqual(['beta']);
  });
});
