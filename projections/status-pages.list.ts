import type { Projection } from '../src/platform/projections/projection.js';
import { statusPagesProjection } from './status-pages.js';

/** The status-pages context's views. */
export const statusPagesProjections: Projection[] = [statusPagesProjection];
