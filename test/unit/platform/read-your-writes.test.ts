/**
 * Which views a write waits for, derived from the service's projections: every projector with a
 * handler for one of the written event types, of any context; never a reactor.
 */
import { projections } from '../../../src/app/contexts.js';
import { INCIDENT_OPENED } from '../../../src/incidents/domain/events.js';
import { CHECK_RECORDED } from '../../../src/checks/domain/check.js';
import { ENDPOINT_RECONFIGURED, PROJECT_CREATED } from '../../../src/monitoring/domain/events.js';
import { CHANNEL_UPDATED } from '../../../src/notifications/domain/channel.js';
import { ReadYourWrites, ViewReader } from '../../../src/platform/projections/views.js';
import { MemoryReadStore } from '../analytics/support/memory-store.js';

describe('the views that show a write', () => {
  const freshness = new ReadYourWrites(new ViewReader(new MemoryReadStore()), null, projections());
  const showing = (...types: string[]) => freshness.viewsShowing(types).sort();

  it('are every projector handling one of its event types, across contexts', () => {
    // analytics_rollups moves an endpoint's share of its project's rollups when it changes project
    expect(showing(ENDPOINT_RECONFIGURED)).toEqual(['alerting', 'analytics_endpoints', 'analytics_rollups', 'monitoring', 'probing']);
    expect(showing(PROJECT_CREATED)).toEqual(['analytics_endpoints', 'monitoring']);
    expect(showing(CHECK_RECORDED)).toEqual(['alerting', 'analytics_endpoints', 'analytics_rollups']);
    expect(showing(PROJECT_CREATED, CHECK_RECORDED)).toEqual(['alerting', 'analytics_endpoints', 'analytics_rollups', 'monitoring']);
  });

  it('leave the notifications reactor out, even for events it handles', () => {
    expect(showing(INCIDENT_OPENED)).toEqual(['incidents']);
    expect(showing(CHANNEL_UPDATED)).toEqual([]);
  });

  it('are none for events no projector handles', () => {
    expect(showing('SomethingNoOneReads')).toEqual([]);
  });

  it('a write that appended nothing waits for nothing', async () => {
    await expect(freshness.require({ append: null, appended: [] })).resolves.toBeUndefined();
  });
});
