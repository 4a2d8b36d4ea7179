/**
 * The state of the endpoints an endpoint depends on (domain/dependencies.ts), for the check
 * recorder (which failing checks are suppressed) and the alert status (`suppressed_by`,
 * `suppressed_by_maintenance`, and a parent's own `failing_in_maintenance_since` and
 * `recovered_in_maintenance_since`, read from the same fold so that a parent and its dependents
 * never disagree).
 *
 * Read from the parents' own streams, not from a view: `endpoint-<id>` (does it still exist in
 * the team, is it enabled) and alerting's `alerts-<id>` (its availability signal, and whether it
 * fails during maintenance). So there is
 * no projection lag, and every process sharing the store answers alike: each read goes on from
 * the revision this process last folded, and on SQLite a read past a stream's known end costs no
 * query while no other connection has committed (architecture: known stream heads). A check is
 * therefore suppressed exactly when its parent's trigger was appended before it was recorded,
 * which also puts the trigger before the check in the log the incident reactor follows.
 */
import { alertRelations } from '../../monitoring/domain/endpoint-configuration.js';
import { endpointSnapshotAggregate, type EndpointSnapshot, type EndpointSnapshotState } from '../../monitoring/domain/endpoint-snapshot.js';
import { endpointStream } from '../../monitoring/domain/events.js';
import { StreamCache } from '../../platform/es/stream-cache.js';
import type { EventStore } from '../../platform/event-store/event-store.port.js';
import { suppressingInMaintenance, suppressingParents, type ParentState } from '../domain/dependencies.js';
import { alertsStream } from '../domain/endpoint-alerts.js';
import { signalsAggregate, type SignalsState } from './endpoint-alerts-fold.js';

type Dependent = Pick<EndpointSnapshot, 'team_id'> & { configuration: Parameters<typeof alertRelations>[0] };

export class ParentSignals {
  private readonly endpoints: StreamCache<EndpointSnapshotState>;
  private readonly alerts: StreamCache<SignalsState>;

  /** Pass the process's folds of the endpoint and alerts streams to share them; else it keeps its own. */
  constructor(events: EventStore, folds: { endpoints?: StreamCache<EndpointSnapshotState>; alerts?: StreamCache<SignalsState> } = {}) {
    this.endpoints = folds.endpoints ?? new StreamCache(events, endpointSnapshotAggregate.initial, endpointSnapshotAggregate.evolve);
    this.alerts = folds.alerts ?? new StreamCache(events, signalsAggregate.initial, signalsAggregate.evolve);
  }

  /** The parents whose triggered availability, or failing during maintenance, suppresses a check of `dependent` with this outcome. */
  async suppressing(dependent: Dependent, success: boolean): Promise<number[]> {
    if (success) return [];
    return suppressingParents(false, await this.parents(dependent));
  }

  /** The parents whose outage suppresses the endpoint's failing checks now, and those of them failing during maintenance (alert status `suppressed_by`, `suppressed_by_maintenance`). */
  async suppressingNow(endpointId: number): Promise<{ suppressed_by: number[]; suppressed_by_maintenance: number[] }> {
    const endpoint = (await this.endpoints.load(endpointStream(endpointId))).state;
    const parents = endpoint === null ? [] : await this.parents(endpoint);
    return { suppressed_by: suppressingParents(false, parents), suppressed_by_maintenance: suppressingInMaintenance(parents) };
  }

  /** The endpoint's own state during maintenance, as its dependents see it (alert status `failing_in_maintenance_since`, `recovered_in_maintenance_since`). */
  async maintenanceState(endpointId: number): Promise<{ failing_in_maintenance_since: string | null; recovered_in_maintenance_since: string | null }> {
    const { state } = await this.alerts.load(alertsStream(endpointId));
    return { failing_in_maintenance_since: state.maintenanceFailingSince ?? null, recovered_in_maintenance_since: state.maintenanceRecoveredSince ?? null };
  }

  /** Every parent named in the dependent's depends_on, as the rule sees it. */
  async parents(dependent: Dependent): Promise<ParentState[]> {
    const ids = alertRelations(dependent.configuration).depends_on;
    return Promise.all(
      ids.map(async (id): Promise<ParentState> => {
        const parent = (await this.endpoints.load(endpointStream(id))).state;
        const probed = parent !== null && parent.team_id === dependent.team_id && parent.enabled;
        if (!probed) return { endpoint_id: id, probed, availability: 'ok', failing_in_maintenance: false, recovered_in_maintenance: false };
        const { state } = await this.alerts.load(alertsStream(id));
        return {
          endpoint_id: id,
          probed,
          availability: state.signals.availability.state,
          failing_in_maintenance: state.maintenanceFailingSince !== undefined,
          recovered_in_maintenance: state.maintenanceRecoveredSince !== undefined,
        };
      }),
    );
  }
}
