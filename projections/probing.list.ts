import type { Projection } from '../src/platform/projections/projection.js';
import { probingProjection } from './probing.js';

/** The probing context's views. */
export const probingProjections: Projection[] = [probingProjection];
