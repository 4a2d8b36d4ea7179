import type { Projection } from '../src/platform/projections/projection.js';

/** The probing context's views. */
export const probingProjections: Projection[] = [];
