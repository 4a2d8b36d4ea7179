/**
 * Dependencies (issue 26 item 1), given events on the parents' streams, when a check of the
 * dependent is recorded, then the events on the dependent's streams.
 */
import { join } from 'node:path';
import { suppressingInMaintenance, suppressingParents } from '../../../src/alerting/domain/dependencies.js';
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

describe('dependencies: a parent failing during its maintenance window', () => {
  // The parent's rule (RULES): 2 failures of the last 3 trigger, 2 successes in a row recover.
  let world: DependencyWorld;
  beforeEach(async () => {
    world = new DependencyWorld();
    await world.endpoint(PARENT, { configuration: RULES });
    await world.endpoint(DEPENDENT, { configuration: { ...RULES, depends_on: [PARENT] } });
  });
  afterEach(() => world.close());

  const failingDependent = async () => world.check(DEPENDENT, false);
  /** The parent fails by its rule on two checks its window hides, then the window ends. */
  const failedThroughWindow = async () => {
    await world.maintenance(PARENT, true);
    await world.check(PARENT, false);
    await world.check(PARENT, false);
    await world.maintenance(PARENT, false);
  };

  it('given the checks its maintenance hid failing by its rule, it suppresses a failing dependent; its own signal stays ok, and its hidden successes end it', async () => {
    await world.maintenance(PARENT, true);
    await world.check(PARENT, false);
    // One hidden failure of three is not yet the rule.
    expect((await failingDependent()).alert_suppressed).toBe(false);
    const second = await world.check(PARENT, false);
    expect(await failingDependent()).toMatchObject({ alert_suppressed: true, suppressed_by: [PARENT] });
    await world.check(PARENT, true);
    expect(await failingDependent()).toMatchObject({ alert_suppressed: true, suppressed_by: [PARENT] });
    const recovery = await world.check(PARENT, true);
    expect((await failingDependent()).alert_suppressed).toBe(false);
    expect(await world.alertEvents(PARENT)).toEqual([
      'AlertSignalsCarriedOver@undefined',
      `AlertMaintenanceFailureStarted@${second.check_id}`,
      `AlertMaintenanceFailureEnded:recovered@${recovery.check_id}`,
    ]);
    expect(await world.signals(PARENT)).toEqual([]);
    expect((await world.checks(PARENT)).every((check) => check.alert_suppressed)).toBe(true);
  });

  it('given the window over while it still fails, it suppresses until its own signal triggers, which takes over', async () => {
    await failedThroughWindow();
    // Nothing new of the parent since the window: it still fails by its rule.
    expect((await failingDependent()).suppressed_by).toEqual([PARENT]);
    // One counted failure is not yet 2 of the last 3 counted: still failing by the hidden checks.
    await world.check(PARENT, false);
    expect((await failingDependent()).suppressed_by).toEqual([PARENT]);
    const trigger = await world.check(PARENT, false);
    expect((await world.alertEvents(PARENT)).slice(-2)).toEqual([`AlertSignalTriggered@${trigger.check_id}`, `AlertMaintenanceFailureEnded:triggered@${trigger.check_id}`]);
    expect((await failingDependent()).suppressed_by).toEqual([PARENT]);
    expect(await world.signals(DEPENDENT)).toEqual([]);
  });

  it('given the window over while it still fails, counted successes by its recovery rule end it', async () => {
    await failedThroughWindow();
    await world.check(PARENT, true);
    expect((await failingDependent()).suppressed_by).toEqual([PARENT]);
    const recovery = await world.check(PARENT, true);
    expect((await world.alertEvents(PARENT)).at(-1)).toBe(`AlertMaintenanceFailureEnded:recovered@${recovery.check_id}`);
    expect((await failingDependent()).alert_suppressed).toBe(false);
    expect(await world.signals(PARENT)).toEqual([]);
  });

  it('given its signal triggered before the window, failing during it starts nothing: the trigger suppresses already', async () => {
    await world.check(PARENT, false);
    await world.check(PARENT, false);
    await world.maintenance(PARENT, true);
    await world.check(PARENT, false);
    await world.check(PARENT, false);
    expect((await world.alertEvents(PARENT)).filter((e) => e.startsWith('AlertMaintenance'))).toEqual([]);
    expect((await failingDependent()).suppressed_by).toEqual([PARENT]);
  });

  /** The parent triggers by its rule, then a window hides its checks. */
  const triggeredBeforeWindow = async () => {
    await world.check(PARENT, false);
    await world.check(PARENT, false);
    await world.maintenance(PARENT, true);
  };

  it('given its signal triggered before the window, hidden successes by its recovery rule end its suppression; its signal stays triggered', async () => {
    await triggeredBeforeWindow();
    await world.check(PARENT, true);
    // One hidden success of the two its rule needs: still down as far as the dependent knows.
    expect((await failingDependent()).suppressed_by).toEqual([PARENT]);
    const recovery = await world.check(PARENT, true);
    const own = await failingDependent();
    expect(own.alert_suppressed).toBe(false);
    expect(own.suppressed_by).toBeUndefined();
    expect((await world.alertEvents(PARENT)).at(-1)).toBe(`AlertMaintenanceRecovered@${recovery.check_id}`);
    expect((await world.signals(PARENT)).map((s) => s.type)).toEqual(['AlertSignalTriggered']);
  });

  it('given it recovered during the window, hidden failures by its trigger rule make it suppress again', async () => {
    await triggeredBeforeWindow();
    await world.check(PARENT, true);
    await world.check(PARENT, true);
    await world.check(PARENT, false);
    expect((await failingDependent()).alert_suppressed).toBe(false);
    const failing = await world.check(PARENT, false);
    expect((await world.alertEvents(PARENT)).at(-1)).toBe(`AlertMaintenanceRecoveryEnded:failing@${failing.check_id}`);
    expect((await failingDependent()).suppressed_by).toEqual([PARENT]);
  });

  it('given it recovered during the window, after it its signal recovering or a counted failure by its trigger rule takes over', async () => {
    await triggeredBeforeWindow();
    await world.check(PARENT, true);
    await world.check(PARENT, true);
    await world.maintenance(PARENT, false);
    // One counted success of two: the signal is still triggered, the hidden checks' verdict stands.
    await world.check(PARENT, true);
    expect((await failingDependent()).alert_suppressed).toBe(false);
    const recovery = await world.check(PARENT, true);
    expect((await world.alertEvents(PARENT)).slice(-2)).toEqual([`AlertSignalRecovered@${recovery.check_id}`, `AlertMaintenanceRecoveryEnded:recovered@${recovery.check_id}`]);
    expect((await failingDependent()).alert_suppressed).toBe(false);

    await world.check(PARENT, false);
    await world.check(PARENT, false);
    await world.maintenance(PARENT, true);
    await world.check(PARENT, true);
    await world.check(PARENT, true);
    await world.maintenance(PARENT, false);
    // Counted checks F, F, (hidden), F: 2 of the last 3 counted failed, the parent is down again.
    const failing = await world.check(PARENT, false);
    expect((await world.alertEvents(PARENT)).at(-1)).toBe(`AlertMaintenanceRecoveryEnded:failing@${failing.check_id}`);
    expect((await failingDependent()).suppressed_by).toEqual([PARENT]);
  });

  it('given a counted check between two windows, the first window’s hidden failures do not count in the second', async () => {
    await world.maintenance(PARENT, true);
    await world.check(PARENT, false);
    await world.maintenance(PARENT, false);
    await world.check(PARENT, true);
    await world.maintenance(PARENT, true);
    await world.check(PARENT, false);
    expect((await failingDependent()).alert_suppressed).toBe(false);
    expect(await world.alertEvents(PARENT)).not.toContainEqual(expect.stringMatching(/^AlertMaintenance/));
  });

  it('given a parent with regions, failing during maintenance starts nothing (its availability is the quorum’s)', async () => {
    await world.endpoint(40, { configuration: { ...RULES, regions: ['eu', 'us'] } });
    await world.endpoint(41, { configuration: { ...RULES, depends_on: [40] } });
    await world.maintenance(40, true);
    await world.check(40, false);
    await world.check(40, false);
    expect((await world.check(41, false)).alert_suppressed).toBe(false);
  });
});

describe('suppressingParents', () => {
  const parent = { probed: true, availability: 'ok' as const, failing_in_maintenance: false, recovered_in_maintenance: false };
  const parents = [
    { ...parent, endpoint_id: 1, availability: 'triggered' as const },
    { ...parent, endpoint_id: 2 },
    { ...parent, endpoint_id: 3, probed: false, availability: 'triggered' as const },
    { ...parent, endpoint_id: 4, failing_in_maintenance: true },
    { ...parent, endpoint_id: 5, probed: false, failing_in_maintenance: true },
    { ...parent, endpoint_id: 6, availability: 'triggered' as const, recovered_in_maintenance: true },
  ];

  it('names the probed parents whose availability is triggered (unless recovered during maintenance) or that fail during maintenance, for failures only', () => {
    expect(suppressingParents(false, parents)).toEqual([1, 4]);
    expect(suppressingParents(true, parents)).toEqual([]);
  });

  it('says which of them suppress because they fail during maintenance', () => {
    expect(suppressingInMaintenance(parents)).toEqual([4]);
  });
});
