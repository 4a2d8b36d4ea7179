import type { CommandContext } from '../../platform/es/command-context.js';
import { foldAppended, runStreamCommand, type Aggregate } from '../../platform/es/stream-command.js';
import type { Platform } from '../../platform/platform.js';
import { IncidentDomainError } from '../domain/errors.js';
import { incidentStreamId } from '../domain/events.js';
import { decide, type Incident, type IncidentCommand, type IncidentState, type StatusRef } from '../domain/incident.js';
import { logIncidentChanges } from './incident-log.js';
import { incidentAggregate, incidentStreams, teamStatuses } from './lookups.js';

/**
 * Attempts of each command: a reactor races clients' commands on the incident and, in an outage,
 * its own links; it is not answering anyone, so it waits its turn longer than a request does.
 */
const COMMAND_ATTEMPTS = 20;

/** The claim stream's one event: which incident a trigger opened (or joined). */
const TRIGGER_CLAIMED = 'AutomaticIncidentClaimed';
const claimAggregate: Aggregate<number | null> = {
  initial: () => null,
  evolve: (claimed, event) => claimed ?? (event.data as { incident_id: number }).incident_id,
};

/**
 * How reactors write automatic incidents (alerting's endpoint signals, SLO burn-rate alerts).
 * Every write is idempotent, so a batch handled again (after a crash, or by a paused process
 * that lost its lease) changes nothing: a trigger's incident id is claimed once in a claim
 * stream of its own (expected revision: no stream), the incident is opened only while its
 * stream is empty, and each command is decided on the incident's current state.
 */
export class AutomaticIncidentWriter {
  constructor(private readonly platform: Platform) {}

  /** The incident's state from its stream (this process's fold); null when it does not exist. */
  async load(incidentId: number): Promise<IncidentState> {
    return (await incidentStreams(this.platform).load(incidentStreamId(incidentId))).state;
  }

  /**
   * The trigger's incident id, fixed once whichever process (or retry) asks first: `join` when
   * given (an incident to join), else a new id.
   */
  async claimIncidentId(claimStream: string, triggerEventId: string, context: CommandContext, join: number | null = null): Promise<number> {
    const { state, result } = await runStreamCommand(this.platform.events, claimStream, claimAggregate, context, async (claimed) => {
      if (claimed !== null) return { events: [], result: claimed };
      const incidentId = join ?? (await this.platform.ids.next('incident'));
      return { events: [{ type: TRIGGER_CLAIMED, data: { incident_id: incidentId, trigger_event_id: triggerEventId } }], result: incidentId };
    }, { attempts: COMMAND_ATTEMPTS });
    return state ?? result;
  }

  /** Opens the incident with the command built for the team's default status, unless it exists. */
  async open(incidentId: number, teamId: number, context: CommandContext, opening: (status: StatusRef) => IncidentCommand): Promise<void> {
    const status = await this.defaultStatus(teamId);
    const opened = await runStreamCommand(this.platform.events, incidentStreamId(incidentId), incidentAggregate, context, (state) => {
      if (state !== null) return { events: [], result: null };
      return { events: decide(state, opening(status), { now: new Date().toISOString() }), result: null };
    }, { fold: incidentStreams(this.platform), attempts: COMMAND_ATTEMPTS });
    logIncidentChanges(this.platform.logger, opened.appended);
  }

  /**
   * Runs one command on an existing incident (none: nothing happens); a check linked to an
   * incident already closed is passed over. Returns the state after it.
   */
  async command(incidentId: number, command: IncidentCommand, context: CommandContext): Promise<IncidentState> {
    return this.change(incidentId, context, (state) => {
      if (command.kind === 'link_check' && !isOpen(state)) return null;
      // A signal whose incident was merged away recovered: the target's own signals resolve it.
      if (command.kind === 'resolve_on_recovery' && state.merged_into_id !== null) return null;
      return command;
    });
  }

  /**
   * Runs the command `choose` picks for the incident's current state (null: none), on an
   * existing incident. Returns the state after it.
   */
  async change(incidentId: number, context: CommandContext, choose: (state: Incident) => IncidentCommand | null): Promise<IncidentState> {
    const result = await runStreamCommand(this.platform.events, incidentStreamId(incidentId), incidentAggregate, context, (state) => {
      const command = state === null ? null : choose(state);
      if (state === null || command === null) return { events: [], result: null };
      return { events: decide(state, command, { now: new Date().toISOString() }), result: null };
    }, { fold: incidentStreams(this.platform), attempts: COMMAND_ATTEMPTS });
    logIncidentChanges(this.platform.logger, result.appended, result.state?.team_id);
    if (!result.append) return result.state;
    return foldAppended(incidentAggregate, result.state, result.appended, result.append.nextExpectedRevision - result.appended.length);
  }

  /**
   * Runs a reactor's handling of `eventId`; an incident change the incidents domain refuses
   * (merged away, for instance) is logged and passed over. Contention is the write path's to
   * retry; any other failure fails the batch, which the runner handles again from its checkpoint.
   */
  async passOverRefused(eventId: string, handle: () => Promise<void>): Promise<void> {
    try {
      await handle();
    } catch (error) {
      if (!(error instanceof IncidentDomainError)) throw error;
      this.platform.logger.warn({ err: error, event_id: eventId }, 'automatic incident change refused');
    }
  }

  private async defaultStatus(teamId: number): Promise<StatusRef> {
    const statuses = await teamStatuses(this.platform, teamId);
    const chosen = statuses.find((status) => status.is_default) ?? statuses[0];
    return chosen ? { id: chosen.id, name: chosen.name } : { id: 0, name: 'Investigating' };
  }
}

/** Neither resolved nor merged into another incident. */
export function isOpen(state: Incident): boolean {
  return state.resolved_at === null && state.merged_into_id === null;
}
