import type { CommandContext } from '../../platform/es/command-context.js';
import type { StreamCache } from '../../platform/es/stream-cache.js';
import { runStreamCommand } from '../../platform/es/stream-command.js';
import type { EventStore, NewEvent } from '../../platform/event-store/event-store.port.js';
import { sloStream } from '../domain/events.js';
import { sloAggregate, type SloEvent, type SloState } from '../domain/slo.js';

/**
 * Decides on an SLO's stream and appends what `decide` returns (nothing when it returns none):
 * the burn reactor's steps and the repair pass, so both decide alike. Whether it appended.
 */
export async function decideOnSlo(
  events: EventStore,
  sloId: number,
  context: CommandContext,
  decide: (state: SloState) => SloEvent[],
  options: { fold?: StreamCache<SloState>; attempts?: number } = {},
): Promise<boolean> {
  const written = await runStreamCommand(
    events,
    sloStream(sloId),
    sloAggregate,
    context,
    (state) => {
      const decided = decide(state);
      return { events: decided as NewEvent[], result: decided.length > 0 };
    },
    options,
  );
  return written.result;
}
