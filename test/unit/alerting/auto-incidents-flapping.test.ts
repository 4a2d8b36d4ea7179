/**
 * The automatic-incident reactor on flapping signal events, handled through its projection
 * handlers over an in-memory SQLite log and read store, including a batch handled a second time
 * after its views were lost (a crash before the checkpoint commit), and a recovery handled again
 * by a reactor with no fence after the next trigger (the incident the alerts stream links wins).
 */
import { autoIncidentsReactor } from '../../../src/alerting/reactors/auto-incidents.js';
import { alertsStream } from '../../../src/alerting/domain/endpoint-alerts.js';
import { SqliteEventStore } from '../../../src/platform/event-store/sqlite/sqlite-event-store.js';
import type { EventStore, RecordedEvent } from '../../../src/platform/event-store/event-store.port.js';
import { IdAllocator } from '../../../src/platform/ids/id-allocator.js';
import { silentLogger } from '../../../src/platform/logging/logger.js';
import type { Platform } from '../../../src/platform/platform.js';
import type { Projection } from '../../../src/platform/projections/projection.js';
import { BatchViewTransaction } from '../../../src/platform/projections/view-transaction.js';
import { MemoryReadStore } from '../analytics/support/memory-store.js';

const ENDPOINT = 7;

describe('automatic incidents of a flapping endpoint', () => {
  let store: EventStore;
  let reactor: Projection;
  let views: MemoryReadStore;
  beforeEach(async () => {
    store = new SqliteEventStore(':memory:');
    const platform = { events: store, ids: new IdAllocator(store), reader: { find: async () => [], get: async () => null, stamps: async () => null }, logger: silentLogger } as unknown as Platform;
    reactor = autoIncidentsReactor(platform);
    views = new MemoryReadStore();
    for (const spec of reactor.collections) await views.ensureCollection(spec);
  });
  afterEach(() => store.close());

  /** Appends a signal event to the endpoint's alerts stream, as alerting's judge does. */
  async function signal(type: string, minute: number, extra: Record<string, unknown> = {}): Promise<RecordedEvent> {
    const data = { endpoint_id: ENDPOINT, team_id: 1, project_id: 3, signal: 'availability', check_id: minute, at: new Date(Date.UTC(2026, 10, 21, 0, minute)).toISOString(), ...extra };
    await store.append(alertsStream(ENDPOINT), [{ type, data }], { expectedRevision: 'any' });
    const events = await store.readStream(alertsStream(ENDPOINT), { direction: 'backwards', maxCount: 1 });
    return events[0];
  }

  /** One batch of the reactor; `lost`: its view writes are never committed (the process died). */
  async function handle(event: RecordedEvent, options: { lost?: boolean } = {}): Promise<void> {
    const transaction = new BatchViewTransaction(views, (collection) => collection);
    await reactor.handlers[event.type]!(event, transaction);
    if (!options.lost) await views.commit(transaction.writes());
  }

  async function incidentEvents(type: string) {
    return (await store.readAll({ after: null, maxCount: 10_000 })).filter((e) => e.type === type).map((e) => e.data as { incident_id: number });
  }

  it('a flapping trigger re-opens the auto-resolved incident, and handled again joins it instead of opening another', async () => {
    await handle(await signal('AlertSignalTriggered', 1));
    const [opened] = await incidentEvents('IncidentOpened');
    await handle(await signal('AlertSignalRecovered', 2));
    expect(await incidentEvents('IncidentResolved')).toHaveLength(1);

    const flappingTrigger = await signal('AlertSignalTriggered', 3, { flapping: true });
    await handle(flappingTrigger, { lost: true });
    await handle(flappingTrigger);

    expect((await incidentEvents('IncidentOpened')).map((e) => e.incident_id)).toEqual([opened.incident_id]);
    expect((await incidentEvents('IncidentReopened')).map((e) => e.incident_id)).toEqual([opened.incident_id]);

    // Flapping starts: the incident says so once; a flapping recovery leaves it open.
    const started = await signal('AlertSignalFlappingStarted', 3, { changes: 3, window_seconds: 3600 });
    await handle(started);
    await handle(started);
    await handle(await signal('AlertSignalRecovered', 4, { flapping: true }));
    expect(await incidentEvents('IncidentDetailsUpdated')).toHaveLength(1);
    expect(await incidentEvents('IncidentResolved')).toHaveLength(1);

    // Flapping stops: resolved.
    await handle(await signal('AlertSignalFlappingStopped', 70, { window_seconds: 3600 }));
    expect((await incidentEvents('IncidentResolved')).map((e) => e.incident_id)).toEqual([opened.incident_id, opened.incident_id]);
  });

  it('a recovery handled again after the next trigger resolves its own incident, not the next one', async () => {
    await handle(await signal('AlertSignalTriggered', 1));
    const recovery = await signal('AlertSignalRecovered', 2);
    await handle(recovery);
    await handle(await signal('AlertSignalTriggered', 3));
    const [first, second] = (await incidentEvents('IncidentOpened')).map((e) => e.incident_id);
    expect(second).not.toBe(first);

    // A second reactor with no fence (a paused process that lost its lease) handles the first
    // recovery now, over the shared views, which already name the second trigger's incident.
    await handle(recovery);
    expect((await incidentEvents('IncidentResolved')).map((e) => e.incident_id)).toEqual([first]);

    // The second outage's own recovery resolves it.
    await handle(await signal('AlertSignalRecovered', 4));
    expect((await incidentEvents('IncidentResolved')).map((e) => e.incident_id)).toEqual([first, second]);
  });

  it('a flapping trigger long after the last resolution opens a new incident', async () => {
    await handle(await signal('AlertSignalTriggered', 1));
    await handle(await signal('AlertSignalRecovered', 2));
    // The default window is an hour; the incident was resolved at the wall clock's now.
    const later = new Date(Date.now() + 2 * 3_600_000);
    const data = { endpoint_id: ENDPOINT, team_id: 1, project_id: 3, signal: 'availability', check_id: 9, at: later.toISOString(), flapping: true };
    await store.append(alertsStream(ENDPOINT), [{ type: 'AlertSignalTriggered', data }], { expectedRevision: 'any' });
    await handle((await store.readStream(alertsStream(ENDPOINT), { direction: 'backwards', maxCount: 1 }))[0]);
    expect(await incidentEvents('IncidentOpened')).toHaveLength(2);
    expect(await incidentEvents('IncidentReopened')).toHaveLength(0);
  });
});
