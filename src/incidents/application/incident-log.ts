/**
 * One info log line per incident life change (opened, resolved, reopened), whoever made it: a
 * user's command or the automatic-incident reactor. Identifiers only: titles, reasons and
 * metadata are users' text and stay out of the logs.
 */
import type { Logger } from '../../platform/logging/logger.js';
import type { NewEvent } from '../../platform/event-store/event-store.port.js';
import { INCIDENT_OPENED, INCIDENT_REOPENED, INCIDENT_RESOLVED, type IncidentOpenedData, type IncidentResolvedData } from '../domain/events.js';

export function logIncidentChanges(logger: Logger, appended: NewEvent[], teamId?: number): void {
  for (const event of appended) {
    const metadata = (event.metadata ?? {}) as { request_id?: string | null; actor?: string | null };
    const who = { actor: metadata.actor ?? undefined, request_id: metadata.request_id ?? undefined };
    if (event.type === INCIDENT_OPENED) {
      const data = event.data as IncidentOpenedData;
      logger.info(
        { incident_id: data.incident_id, team_id: data.team_id, project_id: data.project_id, endpoint_ids: data.endpoint_ids, type: data.type, ...who },
        'incident opened',
      );
    } else if (event.type === INCIDENT_RESOLVED) {
      const data = event.data as IncidentResolvedData;
      logger.info({ incident_id: data.incident_id, team_id: teamId, by: data.by, ...who }, 'incident resolved');
    } else if (event.type === INCIDENT_REOPENED) {
      logger.info({ incident_id: (event.data as { incident_id: number }).incident_id, team_id: teamId, ...who }, 'incident reopened');
    }
  }
}
