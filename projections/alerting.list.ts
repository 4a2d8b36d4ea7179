import type { Projection } from '../src/platform/projections/projection.js';

/** The alerting context's views. */
export const alertingProjections: Projection[] = [];
