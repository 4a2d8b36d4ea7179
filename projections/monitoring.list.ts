import type { Projection } from '../src/platform/projections/projection.js';

/** The monitoring context's views. */
export const monitoringProjections: Projection[] = [];
