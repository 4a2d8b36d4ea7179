import type { RecordedEvent } from '../../platform/event-store/event-store.port.js';
import {
  MAINTENANCE_WINDOW_CANCELLED,
  MAINTENANCE_WINDOW_SCHEDULED,
  type MaintenanceWindowCancelledData,
  type MaintenanceWindowScheduledData,
} from './events.js';
import { coverage, type CoveredEndpoint, type MaintenanceWindow } from './maintenance.js';

/**
 * A team's maintenance windows (stream `maintenance-<teamId>`): the one command-side fold of that
 * stream. Commands decide on it, and check recording folds it per process so a check sees a
 * window as soon as it is scheduled (no projection lag).
 */
export interface MaintenanceScheduleState {
  windows: Map<number, MaintenanceWindow & { reason: string | null; created_at: string }>;
}

export const maintenanceScheduleAggregate = {
  initial: (): MaintenanceScheduleState => ({ windows: new Map() }),
  evolve(state: MaintenanceScheduleState, event: RecordedEvent): MaintenanceScheduleState {
    switch (event.type) {
      case MAINTENANCE_WINDOW_SCHEDULED: {
        const d = event.data as MaintenanceWindowScheduledData;
        const windows = new Map(state.windows);
        windows.set(d.window_id, { ...d, cancelled_at: null });
        return { windows };
      }
      case MAINTENANCE_WINDOW_CANCELLED: {
        const d = event.data as MaintenanceWindowCancelledData;
        const window = state.windows.get(d.window_id);
        if (!window) return state;
        const windows = new Map(state.windows);
        windows.set(d.window_id, { ...window, cancelled_at: d.cancelled_at });
        return { windows };
      }
      default:
        return state;
    }
  },
};

/** True when a team, project, endpoint or legacy maintenance window covers `at` (`coverage`, the one rule). */
export function isCovered(at: string, endpoint: CoveredEndpoint, state: MaintenanceScheduleState): boolean {
  return coverage(at, endpoint, [...state.windows.values()]).under_maintenance;
}
