import type { Projection } from '../src/platform/projections/projection.js';

/** The incidents context's views. */
export const incidentsProjections: Projection[] = [];
