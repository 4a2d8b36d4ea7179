import { endpointSnapshotAggregate } from '../../monitoring/domain/endpoint-snapshot.js';
import { endpointStream } from '../../monitoring/domain/events.js';
import { projectHasEndpoints } from '../../monitoring/views/monitoring/queries.js';
import { ENDPOINTS, MONITORING_VIEW } from '../../monitoring/views/monitoring/view.js';
import { systemContext } from '../../platform/es/command-context.js';
import { loadStream } from '../../platform/es/stream-command.js';
import type { Platform } from '../../platform/platform.js';
import { decideEndpointDeleted, decideProjectEmptied } from '../domain/slo.js';
import type { SloDoc } from '../views/slos/view.js';
import { activeAlerts } from '../views/slos/queries.js';
import { decideOnSlo } from './slo-stream.js';

export interface SloRepairResult {
  /** Deleted endpoints taken out of SLO lists. */
  endpointsDropped: number;
  /** Project SLOs whose alerts ended over a project without endpoints. */
  projectsEmptied: number;
}

/**
 * Repairs what versions before the burn reactor's deletion steps left behind (sessions 24 and
 * 25): an SLO still listing a deleted endpoint (the reactor did not take deletions, or took one
 * before the `slos` view showed the SLO), and a project SLO with an active alert over a project
 * with no endpoint left. Each is decided on the SLO's stream as the reactor decides it live
 * (`decideEndpointDeleted`, `decideProjectEmptied`), so the reactor then resolves the incidents
 * their alerts hold open as for a deletion taken live. Idempotent: a pass that finds nothing
 * appends nothing, and an SLO repaired meanwhile decides nothing twice.
 *
 * `slos`: the live SLOs (the `slos` view). Which endpoints are gone is read from the monitoring
 * view and confirmed on each endpoint's stream (a view behind the log repairs less, never
 * wrongly: only a stream that says "deleted" drops an endpoint).
 */
export async function repairSlos(platform: Platform, slos: SloDoc[], shouldStop: () => boolean = () => false): Promise<SloRepairResult> {
  const result: SloRepairResult = { endpointsDropped: 0, projectsEmptied: 0 };
  const at = new Date().toISOString();
  const repairContext = systemContext('slos');
  for (const slo of slos) {
    if (shouldStop()) break;
    for (const endpointId of await deletedEndpointsOf(platform, slo)) {
      if (await decideOnSlo(platform.events, slo.slo_id, repairContext, (state) => decideEndpointDeleted(state, endpointId, at))) result.endpointsDropped++;
    }
    if (slo.project_id !== null && activeAlerts(slo).length > 0 && !(await projectHasEndpoints(platform.reader, slo.team_id, slo.project_id))) {
      const fact = { project_id: slo.project_id, endpoint_id: null, left_by: 'found_empty' as const, emptied_at: at };
      if (await decideOnSlo(platform.events, slo.slo_id, repairContext, (state) => decideProjectEmptied(state, fact))) result.projectsEmptied++;
    }
  }
  return result;
}

/** The listed endpoints the monitoring view no longer holds whose streams say they are deleted. */
async function deletedEndpointsOf(platform: Platform, slo: SloDoc): Promise<number[]> {
  const listed = slo.endpoint_ids ?? [];
  if (listed.length === 0) return [];
  const present = new Set((await platform.reader.getMany(MONITORING_VIEW, ENDPOINTS, listed)).map((row) => Number(row.endpoint_id)));
  const deleted: number[] = [];
  for (const endpointId of listed.filter((id) => !present.has(id))) {
    if ((await loadStream(platform.events, endpointStream(endpointId), endpointSnapshotAggregate)).state === null) deleted.push(endpointId);
  }
  return deleted;
}
