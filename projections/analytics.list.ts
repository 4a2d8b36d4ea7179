import type { Projection } from '../src/platform/projections/projection.js';
import { analyticsEndpointsProjection } from './analytics-endpoints.js';
import { analyticsRollupsProjection } from './analytics-rollups.js';

/** The analytics context's views. */
export const analyticsProjections: Projection[] = [analyticsRollupsProjection, analyticsEndpointsProjection];
