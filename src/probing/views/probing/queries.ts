/** Reads of the probing view (names and row type: `view.ts`). */
import type { ViewReader } from '../../../platform/projections/views.js';
import { PROBING_VIEW, SCHEDULE, type ScheduleRow } from './view.js';

/** The rows the scheduler publishes jobs for (enabled and verified endpoints), by endpoint id. */
export async function schedulableRows(reader: ViewReader): Promise<ScheduleRow[]> {
  return (await reader.find(PROBING_VIEW, SCHEDULE, { filter: { schedulable: true }, sort: [['endpoint_id', 'asc']] })) as unknown as ScheduleRow[];
}

/** Every endpoint's row, schedulable or not (the regions an endpoint names count either way). */
export async function scheduleRows(reader: ViewReader): Promise<ScheduleRow[]> {
  return (await reader.find(PROBING_VIEW, SCHEDULE, {})) as unknown as ScheduleRow[];
}
