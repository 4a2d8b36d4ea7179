import { isCovered, maintenanceScheduleAggregate, type MaintenanceScheduleState } from '../domain/maintenance-schedule.js';
import type { EndpointSnapshot } from '../domain/endpoint-snapshot.js';
import { maintenanceStream } from '../domain/events.js';
import { StreamCache } from '../../platform/es/stream-cache.js';
import type { EventStore } from '../../platform/event-store/event-store.port.js';

/**
 * Whether maintenance covers a check of an endpoint at `checkedAt`: the team's windows from
 * `maintenance-<teamId>` (the events the `monitoring` view's maintenance_windows are built from,
 * without projection lag) plus the endpoint's legacy maintenance_until. Folded per process.
 */
export class MaintenanceCoverage {
  private readonly schedules: StreamCache<MaintenanceScheduleState>;

  constructor(events: EventStore) {
    this.schedules = new StreamCache(events, maintenanceScheduleAggregate.initial, maintenanceScheduleAggregate.evolve);
  }

  readonly covers = async (endpoint: EndpointSnapshot, checkedAt: string): Promise<boolean> => {
    const windows = await this.schedules.load(maintenanceStream(endpoint.team_id));
    return isCovered(checkedAt, endpoint, windows.state);
  };
}
