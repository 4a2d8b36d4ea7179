/**
 * Automatic incidents: a process manager over the event log (api-decisions: Alerting).
 *
 * - AlertSignalTriggered opens an automatic incident for the endpoint and signal (or joins the
 *   one still open for that pair) and appends AlertSignalIncidentLinked to the checks stream.
 * - Every further counted failing check (availability) or over-threshold check (latency) is
 *   linked to the open incident, which bumps error_count and last_error_at.
 * - AlertSignalRecovered resolves the incident when auto_resolve is true; with auto_resolve
 *   off it stays open and the next trigger joins it.
 *
 * One process runs it at a time (lease `alerting-incidents`). Its checkpoint and the open
 * incident per endpoint+signal live in the read store collection `alerting_reactor`. Effects
 * are idempotent, so an event handled again after a crash changes nothing: the incident id for
 * a trigger is fixed before the incident is opened (and opened with `no_stream`), links are
 * deduplicated by check id, resolving twice is a no-op.
 */
import { randomUUID } from 'node:crypto';
import {
  ALERT_SIGNAL_INCIDENT_LINKED,
  ALERT_SIGNAL_RECOVERED,
  ALERT_SIGNAL_TRIGGERED,
  countsForAlerting,
  type AlertSignalIncidentLinkedData,
  type AlertSignalRecoveredData,
  type AlertSignalTriggeredData,
  type SignalType,
} from '../domain/endpoint-alerts.js';
import { IncidentDomainError } from '../../incidents/domain/errors.js';
import { incidentStreamId, toLinkedCheck, type IncidentEvent } from '../../incidents/domain/events.js';
import { decide, evolve, initialState, type IncidentCommand, type IncidentState, type StatusRef } from '../../incidents/domain/incident.js';
import { CHECK_RECORDED, type CheckRecordedData } from '../../monitoring/domain/check.js';
import { checksStream } from '../../monitoring/domain/events.js';
import { runStreamCommand, type Aggregate } from '../../platform/es/stream-command.js';
import { systemContext } from '../../platform/es/command-context.js';
import type { EventSubscription, RecordedEvent } from '../../platform/event-store/event-store.port.js';
import type { Platform } from '../../platform/platform.js';
import { batches } from '../../platform/projections/batches.js';
import { StreamCache } from '../../probing/application/stream-cache.js';
import type { CheckRecorder } from './check-recorder.js';

export const REACTOR_COLLECTION = 'alerting_reactor';
const LEASE = 'alerting-incidents';
const LEASE_TTL_MS = 10_000;
const RENEW_MS = 1_000;
const BATCH_MAX = 500;
const GATHER_MS = 5;
const IDLE_CHECKPOINT_MS = 1_000;
const FOLDED_INCIDENTS = 1_000;
const REACTS_TO = new Set([ALERT_SIGNAL_TRIGGERED, ALERT_SIGNAL_RECOVERED, CHECK_RECORDED]);

const incidentAggregate: Aggregate<IncidentState> = {
  initial: initialState,
  evolve: (state, event) => evolve(state, event as unknown as IncidentEvent),
};

const TITLES: Record<SignalType, (name: string) => string> = {
  availability: (name) => `${name} is unavailable`,
  latency: (name) => `${name} is responding slowly`,
};

export class AutoIncidents {
  private timer: NodeJS.Timeout | null = null;
  private subscription: EventSubscription | null = null;
  private loop: Promise<void> | null = null;
  private stopped = true;
  private ready = false;
  /**
   * Incident streams folded forward from the last revision seen: an outage links every failing
   * check, and replaying the whole stream per link made each link cost more than the last.
   */
  private readonly folded: { fold: StreamCache<IncidentState> };

  constructor(
    private readonly platform: Platform,
    private readonly recorder: CheckRecorder,
  ) {
    this.folded = { fold: new StreamCache<IncidentState>(platform.events, incidentAggregate.initial, incidentAggregate.evolve, FOLDED_INCIDENTS) };
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const beat = () => void this.heartbeat().catch((error) => this.platform.logger.warn({ err: error }, 'auto-incidents heartbeat failed'));
    beat();
    this.timer = setInterval(beat, RENEW_MS);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.subscription?.close();
    await this.loop;
    await this.platform.coordination.releaseLease(LEASE, this.platform.instanceId).catch(() => undefined);
  }

  private async heartbeat(): Promise<void> {
    if (this.stopped) return;
    if (!this.ready) {
      await this.platform.views.ensureCollection({ name: REACTOR_COLLECTION, indexes: [] });
      this.ready = true;
    }
    const grant = await this.platform.coordination.acquireLease(LEASE, this.platform.instanceId, LEASE_TTL_MS);
    if (!grant) {
      await this.subscription?.close();
      return;
    }
    if (this.loop || this.stopped) return;
    const checkpoint = await this.platform.views.get(REACTOR_COLLECTION, 'checkpoint');
    const subscription = this.platform.events.subscribeToAll({ after: (checkpoint?.position as number | undefined) ?? null });
    this.subscription = subscription;
    this.loop = this.consume(subscription).finally(() => {
      this.loop = null;
      this.subscription = null;
    });
  }

  /** The checkpoint is written once per batch, and for a batch of nothing it reacts to at most once a second. */
  private async consume(subscription: EventSubscription): Promise<void> {
    let checkpointedAt = 0;
    try {
      for await (const batch of batches(subscription, { max: BATCH_MAX, gatherMs: GATHER_MS })) {
        let handled = 0;
        for (const event of batch) {
          if (this.stopped) return;
          if (!REACTS_TO.has(event.type)) continue;
          await this.handleWithRetry(event);
          handled++;
        }
        if (handled === 0 && Date.now() - checkpointedAt < IDLE_CHECKPOINT_MS) continue;
        await this.platform.views.commit([{ op: 'put', collection: REACTOR_COLLECTION, doc: { id: 'checkpoint', position: batch[batch.length - 1].position } }]);
        checkpointedAt = Date.now();
      }
    } catch (error) {
      if (!this.stopped) this.platform.logger.warn({ err: error }, 'auto-incidents subscription ended');
    }
  }

  private async handleWithRetry(event: RecordedEvent): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.handle(event);
      } catch (error) {
        if (error instanceof IncidentDomainError) {
          this.platform.logger.warn({ err: error, event_id: event.id }, 'automatic incident change refused');
          return;
        }
        if (attempt >= 5 || this.stopped) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
      }
    }
  }

  async handle(event: RecordedEvent): Promise<void> {
    switch (event.type) {
      case ALERT_SIGNAL_TRIGGERED:
        return this.onTriggered(event as RecordedEvent<AlertSignalTriggeredData>);
      case ALERT_SIGNAL_RECOVERED:
        return this.onRecovered(event.data as AlertSignalRecoveredData);
      case CHECK_RECORDED:
        return this.onCheck(event.data as CheckRecordedData);
    }
  }

  private async onCheck(check: CheckRecordedData): Promise<void> {
    if (!countsForAlerting(check)) return;
    if (!check.success) await this.linkToOpen(check.endpoint_id, 'availability', check);
    if (check.success && check.latency_anomaly) await this.linkToOpen(check.endpoint_id, 'latency', check);
  }

  private async linkToOpen(endpointId: number, signal: SignalType, check: CheckRecordedData): Promise<void> {
    const open = await this.openIncident(endpointId, signal);
    if (open === null) return;
    await this.incidentCommand(open, { kind: 'link_check', check: toLinkedCheck(check) });
  }

  private async onTriggered(event: RecordedEvent<AlertSignalTriggeredData>): Promise<void> {
    const data = event.data;
    const check = await this.findCheck(data.endpoint_id, data.check_id);
    let incidentId = await this.openIncident(data.endpoint_id, data.signal);
    if (incidentId !== null) {
      const state = (await runStreamCommand(this.platform.events, incidentStreamId(incidentId), incidentAggregate, systemContext('alerting'), () => ({ events: [], result: null }), this.folded)).state;
      if (!state || state.resolved_at !== null || state.merged_into_id !== null) incidentId = null;
    }
    if (incidentId !== null) {
      if (check) await this.incidentCommand(incidentId, { kind: 'link_check', check: toLinkedCheck(check) });
    } else {
      incidentId = await this.openNew(event, check);
    }
    await this.putDoc({ id: openKey(data.endpoint_id, data.signal), incident_id: incidentId });
    const link: AlertSignalIncidentLinkedData = { endpoint_id: data.endpoint_id, signal: data.signal, incident_id: incidentId };
    await this.platform.events.append(
      checksStream(data.endpoint_id),
      [{ type: ALERT_SIGNAL_INCIDENT_LINKED, data: link, metadata: { actor: 'system:alerting', request_id: null, correlation_id: event.id, causation_id: event.id } }],
      { expectedRevision: 'any' },
    );
  }

  private async openNew(event: RecordedEvent<AlertSignalTriggeredData>, check: CheckRecordedData | null): Promise<number> {
    const data = event.data;
    const pendingKey = `pending:${event.id}`;
    const pending = await this.platform.views.get(REACTOR_COLLECTION, pendingKey);
    const incidentId = pending ? Number(pending.incident_id) : await this.platform.ids.next('incident');
    if (!pending) await this.putDoc({ id: pendingKey, incident_id: incidentId });
    const endpoint = await this.recorder.loadEndpoint(data.endpoint_id);
    const name = endpoint?.name ?? `Endpoint ${data.endpoint_id}`;
    const reason =
      data.signal === 'availability'
        ? `Availability signal triggered by check ${data.check_id}${check?.failure_reason ? `: ${check.failure_reason}` : ''}`
        : `Latency signal triggered by check ${data.check_id}${data.threshold_ms !== undefined ? ` over ${data.threshold_ms} ms` : ''}`;
    await runStreamCommand(this.platform.events, incidentStreamId(incidentId), incidentAggregate, systemContext('alerting', event.id, event.id), async (state) => {
      if (state !== null) return { events: [], result: null };
      const command: IncidentCommand = {
        kind: 'open_automatic',
        incident_id: incidentId,
        team_id: data.team_id,
        project_id: data.project_id,
        endpoint_id: data.endpoint_id,
        signal: data.signal,
        title: TITLES[data.signal](name),
        detection_reason: reason,
        status: await this.defaultStatus(data.team_id),
        ...(check ? { check: toLinkedCheck(check) } : {}),
      };
      return { events: decide(state, command, { now: new Date().toISOString() }), result: null };
    }, this.folded);
    return incidentId;
  }

  private async onRecovered(data: AlertSignalRecoveredData): Promise<void> {
    const incidentId = await this.openIncident(data.endpoint_id, data.signal);
    if (incidentId === null) return;
    const state = await this.incidentCommand(incidentId, { kind: 'resolve_on_recovery' });
    if (state === null || state.resolved_at !== null || state.merged_into_id !== null) {
      await this.platform.views.commit([{ op: 'delete', collection: REACTOR_COLLECTION, id: openKey(data.endpoint_id, data.signal) }]);
    }
  }

  /** Runs one incident command; returns the state after it. */
  private async incidentCommand(incidentId: number, command: IncidentCommand): Promise<IncidentState> {
    const result = await runStreamCommand(this.platform.events, incidentStreamId(incidentId), incidentAggregate, systemContext('alerting', randomUUID()), (state) => {
      if (state === null) return { events: [], result: null };
      if (command.kind === 'link_check' && (state.resolved_at !== null || state.merged_into_id !== null)) return { events: [], result: null };
      return { events: decide(state, command, { now: new Date().toISOString() }), result: null };
    }, this.folded);
    return result.appended.reduce<IncidentState>((state, event) => evolve(state, event as unknown as IncidentEvent), result.state);
  }

  private async openIncident(endpointId: number, signal: SignalType): Promise<number | null> {
    const doc = await this.platform.views.get(REACTOR_COLLECTION, openKey(endpointId, signal));
    return doc ? Number(doc.incident_id) : null;
  }

  private async findCheck(endpointId: number, checkId: number): Promise<CheckRecordedData | null> {
    const recent = await this.platform.events.readStream(checksStream(endpointId), { direction: 'backwards', maxCount: 50 });
    const found = recent.find((event) => event.type === CHECK_RECORDED && (event.data as CheckRecordedData).check_id === checkId);
    return found ? (found.data as CheckRecordedData) : null;
  }

  private async defaultStatus(teamId: number): Promise<StatusRef> {
    const statuses = await this.platform.reader.find('tenancy', 'incident_statuses', { filter: { team_id: teamId }, sort: [['id_num', 'asc']] });
    const chosen = statuses.find((status) => status.is_default === true) ?? statuses[0];
    if (!chosen) return { id: 0, name: 'Investigating' };
    return { id: Number(chosen.id_num ?? chosen.id), name: String(chosen.name) };
  }

  private putDoc(doc: { id: string; [key: string]: unknown }): Promise<void> {
    return this.platform.views.commit([{ op: 'put', collection: REACTOR_COLLECTION, doc }]);
  }
}

function openKey(endpointId: number, signal: SignalType): string {
  return `open:${endpointId}:${signal}`;
}

