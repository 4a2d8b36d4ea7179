import type { ActiveAlert } from '../../domain/slo.js';
import type { SloFields } from '../../domain/events.js';
import type { BurnSeverity } from '../../domain/events.js';

/** The slos view (projection `slos`), written by `projection.ts`, read through `queries.ts` and by the burn-rate reactor. */
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
