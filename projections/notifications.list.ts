import type { Projection } from '../src/platform/projections/projection.js';
import { notificationsReactor } from './notifications.js';

export const notificationsProjections: Projection[] = [notificationsReactor];
