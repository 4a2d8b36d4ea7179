import type { Projection } from '../src/platform/projections/projection.js';
import { tenancyProjection } from './tenancy.js';

/** Every view of the service. A projection listed here is built and kept up to date by the runner. */
export const allProjections: Projection[] = [tenancyProjection];
