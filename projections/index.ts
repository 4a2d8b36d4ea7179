/**
 * The catalogue of every processor the runner keeps up to date from the log: each view's
 * projection (`src/<context>/views/<view>/projection.ts`) and the reactors that need nothing but
 * the read store (`src/<context>/reactors/`). The composition root (`src/app/contexts.ts`)
 * imports this list, and nothing else imports `projections/` (README.md here: how to add one).
 * Reactors that need a context's services (automatic incidents, SLO burn alerts) are started by
 * their context's workers with `runner.run(...)`.
 */
import type { Projection } from '../src/platform/projections/projection.js';
import { alertingProjection } from '../src/alerting/views/alerting/projection.js';
import { analyticsEndpointsProjection } from '../src/analytics/views/endpoints/projection.js';
import { analyticsRollupsProjection } from '../src/analytics/views/rollups/projection.js';
import { incidentsProjection } from '../src/incidents/views/incidents/projection.js';
import { monitoringProjection } from '../src/monitoring/views/monitoring/projection.js';
import { notificationsReactor } from '../src/notifications/reactors/notifications/reactor.js';
import { probingProjection } from '../src/probing/views/probing/projection.js';
import { slosProjection } from '../src/slos/views/slos/projection.js';
import { statusPagesProjection } from '../src/statuspages/views/status-pages/projection.js';
import { tenancyProjection } from '../src/tenancy/views/tenancy/projection.js';

/**
 * Processors that left the catalogue: the runner drops the collections, pointer and checkpoints
 * an earlier version's database still holds for them (with the stale generations, hourly).
 * `checks`: monitoring's checks view, whose rows are analytics' raw rows since rollups v9.
 */
export const RETIRED_PROCESSORS: readonly string[] = ['checks'];

export const PROCESSORS: Projection[] = [
  tenancyProjection,
  monitoringProjection,
  incidentsProjection,
  alertingProjection,
  analyticsRollupsProjection,
  analyticsEndpointsProjection,
  probingProjection,
  notificationsReactor,
  statusPagesProjection,
  slosProjection,
];
