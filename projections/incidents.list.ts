import type { Projection } from '../src/platform/projections/projection.js';
import { incidentsProjection } from './incidents.js';

/** The incidents context's views. */
export const incidentsProjections: Projection[] = [incidentsProjection];
