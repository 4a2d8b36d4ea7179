/**
 * Dependencies (issue 26 item 1), given events on the parents' streams, when a check of the
 * dependent is recorded, then the events on the dependent's streams.
 */
import { join } from 'node:path';
import { suppressingParents } from '../../../src/alerting/domain/dependencies.js';
import { SqliteEventStore } from '../../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { makeTempDir } from '../../support/event-store-fixtures.js';
import { DependencyWorld } from './dependency-support.js';

const PARENT = 10;
const OTHER_PARENT = 11;
const DEPENDENT = 20;
// Availability triggers on 2 failures of the last 3 and recovers after 2 successes.
const RULES = { latency_detection_mode: 'off' as const, latency_trigger_count: 2, latency_trigger_window: 3, latency_recovery_count: 2 };

describe('dependencies: failing checks while a parent is down', () => {
  let world: DependencyWorld;
  beforeEach(async () => {
    world = new DependencyWorld();
    await world.endpoint(PARENT);
    await world.endpoint(OTHER_PARENT);
    await world.endpoint(DEPENDENT, { configuration: { ...RULES, depends_on: [PARENT, OTHER_PARENT] } });
  });
  afterEach(() => world.close());

  it('given a parent triggered, a failing check is recorded suppressed by it, failure_reason unchanged, and moves no signal', async () => {
    await world.parentSignal(PARENT, 'triggered');
    for (let i = 0; i < 4; i++) await world.check(DEPENDENT, false);
    const checks = await world.checks(DEPENDENT);
    expect(checks.map((c) => [c.alert_suppressed, c.suppressed_by, c.failure_reason])).toEqual(Array(4).fill([true, [PARENT], 'status: 503']));
    expect(await world.signals(DEPENDENT)).toEqual([]);
  });

  it('given both parents triggered, the check names both; a success is never suppressed', async () => {
    await world.parentSignal(PARENT, 'triggered');
    await world.parentSignal(OTHER_PARENT, 'triggered');
    const failed = await world.check(DEPENDENT, false);
    const succeeded = await world.check(DEPENDENT, true);
    expect(failed).toMatchObject({ alert_suppressed: true, suppressed_by: [PARENT, OTHER_PARENT] });
    expect(succeeded.alert_suppressed).toBe(false);
    expect(succeeded.suppressed_by).toBeUndefined();
  });

  it('given the parent recovered, a dependent that still fails triggers on its own from then on', async () => {
    await world.parentSignal(PARENT, 'triggered');
    await world.check(DEPENDENT, false);
    await world.check(DEPENDENT, false);
    await world.parentSignal(PARENT, 'ok');
    const first = await world.check(DEPENDENT, false);
    expect(first.alert_suppressed).toBe(false);
    // The suppressed failures do not count: one counted failure is not yet 2 of 3.
    expect(await world.signals(DEPENDENT)).toEqual([]);
    const second = await world.check(DEPENDENT, false);
    expect(await world.signals(DEPENDENT)).toEqual([{ type: 'AlertSignalTriggered', check_id: second.check_id }]);
  });

  it('given a dependent already triggered, it stays triggered through the parent outage and recovers on its successes', async () => {
    await world.check(DEPENDENT, false);
    const trigger = await world.check(DEPENDENT, false);
    await world.parentSignal(PARENT, 'triggered');
    await world.check(DEPENDENT, false);
    await world.check(DEPENDENT, true);
    const recovery = await world.check(DEPENDENT, true);
    expect(await world.signals(DEPENDENT)).toEqual([
      { type: 'AlertSignalTriggered', check_id: trigger.check_id },
      { type: 'AlertSignalRecovered', check_id: recovery.check_id },
    ]);
  });

  it('given a parent disabled or deleted while triggered, it suppresses nothing (its signal no longer moves)', async () => {
    await world.parentSignal(PARENT, 'triggered');
    await world.store.append('endpoint-10', [{ type: 'EndpointDisabled', data: { endpoint_id: PARENT, team_id: 1, at: '2026-11-21T05:00:00.000Z' } }], { expectedRevision: 'any' });
    expect((await world.check(DEPENDENT, false)).alert_suppressed).toBe(false);
  });

  it('given maintenance, the check is suppressed without suppressed_by', async () => {
    await world.endpoint(30, { configuration: { ...RULES, depends_on: [PARENT] } });
    await world.store.append(
      'endpoint-30',
      [{ type: 'EndpointMaintenanceUntilSet', data: { endpoint_id: 30, team_id: 1, maintenance_until: '2030-01-01T00:00:00.000Z', at: '2026-11-21T00:00:00.000Z' } }],
      { expectedRevision: 'any' },
    );
    await world.parentSignal(PARENT, 'triggered');
    const check = await world.check(30, false);
    expect(check.alert_suppressed).toBe(true);
    expect(check.suppressed_by).toBeUndefined();
  });
});

describe('dependencies across recorders sharing a store', () => {
  it('a recorder that folded the parent before sees a trigger another recorder appended since', async () => {
    const dir = makeTempDir('dependencies-');
    const parentSide = new DependencyWorld(new SqliteEventStore(join(dir.path, 'events.sqlite')), 'a');
    const dependentSide = new DependencyWorld(new SqliteEventStore(join(dir.path, 'events.sqlite')), 'b');
    try {
      await parentSide.endpoint(PARENT, { configuration: { ...RULES, latency_trigger_count: 1, latency_trigger_window: 1 } });
      await parentSide.endpoint(DEPENDENT, { configuration: { ...RULES, depends_on: [PARENT] } });
      // The dependent's recorder folds the parent's streams while it is up...
      expect((await dependentSide.check(DEPENDENT, false)).alert_suppressed).toBe(false);
      // ...the parent's own recorder then records the failure that triggers it...
      await parentSide.check(PARENT, false);
      expect((await parentSide.signals(PARENT)).map((s) => s.type)).toEqual(['AlertSignalTriggered']);
      // ...and the dependent's next failure is suppressed by it.
      expect(await dependentSide.check(DEPENDENT, false)).toMatchObject({ alert_suppressed: true, suppressed_by: [PARENT] });
    } finally {
      await parentSide.close();
      await dependentSide.close();
      dir.remove();
    }
  });
});

describe('suppressingParents', () => {
  it('names the probed parents whose availability is triggered, for failures only', () => {
    const parents = [
      { endpoint_id: 1, probed: true, availability: 'triggered' as const },
      { endpoint_id: 2, probed: true, availability: 'ok' as const },
      { endpoint_id: 3, probed: false, availability: 'triggered' as const },
    ];
    expect(suppressingParents(false, parents)).toEqual([1]);
    expect(suppressingParents(true, parents)).toEqual([]);
  });
});
