import type { EventStore } from '../../platform/event-store/event-store.port.js';
import type { CommandContext } from '../../platform/es/command-context.js';
import { runStreamCommand, type StreamCommandResult, type StreamFold } from '../../platform/es/stream-command.js';
import { decideEndpoint } from '../../monitoring/domain/endpoint.js';
import { endpointStream } from '../../monitoring/domain/events.js';
import { endpointSnapshotAggregate, type EndpointSnapshot, type EndpointSnapshotState } from '../../monitoring/domain/endpoint-snapshot.js';

/**
 * Records that the endpoint's destination answered its verification token: monitoring's endpoint
 * decider on the endpoint stream, through the one write path. `endpoints` is the probing fold of
 * endpoint streams (the check recorder's), so the next probe sees the endpoint verified. Returns
 * the endpoint as it is after the command (unchanged when it was already verified).
 */
export async function recordDestinationVerified(
  events: EventStore,
  endpoints: StreamFold<EndpointSnapshotState>,
  endpoint: EndpointSnapshot,
  context: CommandContext,
): Promise<{ endpoint: EndpointSnapshot; written: StreamCommandResult<EndpointSnapshotState, null> }> {
  const stream = endpointStream(endpoint.endpoint_id);
  const verify = { kind: 'verify_destination', endpoint_id: endpoint.endpoint_id, team_id: endpoint.team_id, verified_at: new Date().toISOString() } as const;
  const written = await runStreamCommand(events, stream, endpointSnapshotAggregate, context, (current) => ({ events: decideEndpoint(current, verify), result: null }), {
    fold: endpoints,
  });
  const after = written.append ? (await endpoints.load(stream)).state : written.state;
  return { endpoint: after ?? endpoint, written };
}
