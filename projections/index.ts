import type { Projection } from '../src/platform/projections/projection.js';
import { alertingProjections } from './alerting.list.js';
import { analyticsProjections } from './analytics.list.js';
import { incidentsProjections } from './incidents.list.js';
import { monitoringProjections } from './monitoring.list.js';
import { notificationsProjections } from './notifications.list.js';
import { probingProjections } from './probing.list.js';
import { statusPagesProjections } from './status-pages.list.js';
import { tenancyProjection } from './tenancy.js';

/** Every view of the service. A projection listed here is built and kept up to date by the runner. */
export const allProjections: Projection[] = [
  tenancyProjection,
  ...monitoringProjections,
  ...incidentsProjections,
  ...alertingProjections,
  ...analyticsProjections,
  ...probingProjections,
  ...notificationsProjections,
  ...statusPagesProjections,
];
