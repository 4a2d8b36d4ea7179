import type { Projection } from '../src/platform/projections/projection.js';

/** The analytics context's views. */
export const analyticsProjections: Projection[] = [];
