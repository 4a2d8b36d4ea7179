import type { ActiveAlert } from './slo.js';
import type { SloFields } from './events.js';
import type { BurnSeverity } from './events.js';

/** The slos view (projection `slos`), written by projections/slos.ts. */
export const SLOS_PROJECTION = 'slos';
export const SLOS_COLLECTION = 'slos';

/** One live SLO (a deleted one's document is removed), with its active burn-rate alerts. */
export interface SloDoc extends SloFields {
  id: string;
  slo_id: number;
  team_id: number;
  alerts: Record<BurnSeverity, ActiveAlert | null>;
  created_at: string;
  updated_at: string;
}
