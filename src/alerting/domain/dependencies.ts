/**
 * Dependencies between endpoints (issue 26): an endpoint may depend on others of its team
 * (`depends_on`). While any of them has its availability signal triggered, a failing check of
 * the dependent is recorded with `alert_suppressed: true` and `suppressed_by` naming them: it
 * counts toward none of its signals and opens no incident, and the parent's incident lists the
 * dependent. A success is never suppressed this way, so a dependent recovers as usual, and once
 * every parent has recovered its failures count again.
 *
 * A parent failing during its maintenance window (session 25) suppresses the same way: its own
 * signal cannot trigger (maintenance hides its checks), but it fails by the same rule on the
 * checks maintenance hid (endpoint-alerts.ts, AlertMaintenanceFailureStarted), and the planned
 * work explains its dependents' failures. It keeps doing so after the window until its own
 * signal takes over (triggers) or it recovers.
 *
 * The mirror image (session 26): a parent triggered before its window whose hidden checks
 * recover by its rule (AlertMaintenanceRecovered) stops suppressing, though maintenance keeps
 * its signal triggered: it is up again, so its dependents' failures are their own.
 */
import type { SignalStateName } from './endpoint-alerts.js';

/** What the rule needs to know of one endpoint named in `depends_on`. */
export interface ParentState {
  endpoint_id: number;
  /** Exists, belongs to the dependent's team and is enabled: a deleted or disabled parent's signal no longer moves, so it suppresses nothing. */
  probed: boolean;
  availability: SignalStateName;
  /** Failing by its availability rule on the checks its maintenance window hid (its own signal stays ok meanwhile). */
  failing_in_maintenance: boolean;
  /** Its availability triggered, but recovered by its rule on the checks its maintenance window hid (its signal stays triggered meanwhile). */
  recovered_in_maintenance: boolean;
}

/** The parents whose outage suppresses a check with this outcome, in `depends_on` order; none for a success. */
export function suppressingParents(success: boolean, parents: readonly ParentState[]): number[] {
  if (success) return [];
  return parents.filter(suppresses).map((parent) => parent.endpoint_id);
}

/** Of the parents suppressing failures now, those that do because they fail during maintenance, in `depends_on` order. */
export function suppressingInMaintenance(parents: readonly ParentState[]): number[] {
  return parents.filter((parent) => suppresses(parent) && parent.availability !== 'triggered').map((parent) => parent.endpoint_id);
}

function suppresses(parent: ParentState): boolean {
  return parent.probed && ((parent.availability === 'triggered' && !parent.recovered_in_maintenance) || parent.failing_in_maintenance);
}
