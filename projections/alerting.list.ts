import type { Projection } from '../src/platform/projections/projection.js';
import { alertingProjection } from './alerting.js';

/** The alerting context's views. */
export const alertingProjections: Projection[] = [alertingProjection];
