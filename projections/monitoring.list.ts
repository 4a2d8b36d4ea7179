import type { Projection } from '../src/platform/projections/projection.js';
import { checksProjection } from './checks.js';
import { monitoringProjection } from './monitoring.js';

/** The monitoring context's views. */
export const monitoringProjections: Projection[] = [monitoringProjection, checksProjection];
