import { systemContext } from '../../src/platform/es/command-context.js';
import { runStreamCommand } from '../../src/platform/es/stream-command.js';
import type { NewEvent } from '../../src/platform/event-store/event-store.port.js';
import { SLO_BURN_ALERT_TRIGGERED, sloStream } from '../../src/slos/domain/events.js';
import { sloAggregate } from '../../src/slos/domain/slo.js';
import type { TestApp } from './test-app.js';

/** A page alert on the SLO, as the reactor decides one (its check is made up: nothing reads it). */
export async function triggerPage(t: TestApp, sloId: number, teamId: number, endpointId: number): Promise<void> {
  const data = { slo_id: sloId, team_id: teamId, severity: 'page', long_window: '1h', long_burn_rate: 20, short_window: '5m', short_burn_rate: 30, check_id: 1, endpoint_id: endpointId, triggered_at: new Date().toISOString() };
  await runStreamCommand(t.platform.events, sloStream(sloId), sloAggregate, systemContext('test'), () => ({ events: [{ type: SLO_BURN_ALERT_TRIGGERED, data }] as NewEvent[], result: null }));
}
