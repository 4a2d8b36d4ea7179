/**
 * The monitor's own busy time is not the target's latency: a real HTTP probe against a local
 * target, recorded through the prober's recorder (alerting's judge) over an in-memory log.
 * The endpoint pages on one check over 200 ms (fixed threshold, 1 of the last 1).
 */
import { DEFAULT_LATENCY_SETTINGS, type EndpointConfiguration } from '../../../src/monitoring/domain/endpoint-configuration.js';
import { DEFAULT_CONFIGURATION } from '../../../src/monitoring/domain/endpoint.js';
import { createHttpProber, type HttpProber } from '../../../src/probing/prober/http-prober.js';
import { startServer, type Handler, type LocalServer } from '../prober/local-server.js';
import { eventually } from '../../support/eventually.js';
import { DependencyWorld } from './dependency-support.js';

const ENDPOINT = 11;
const PAGES_OVER_200_MS: Partial<EndpointConfiguration> = {
  ...DEFAULT_LATENCY_SETTINGS,
  latency_detection_mode: 'fixed',
  latency_fixed_threshold_ms: 200,
  latency_trigger_count: 1,
  latency_trigger_window: 1,
};

/**
 * Resolves once this process's event loop has been idle for most of a 50 ms window. Jest runs
 * test files one after another in the same worker process, and work an earlier file left
 * running (a loop of `setImmediate` turns, say) keeps the loop busy: the prober then rightly
 * counts the whole request as the monitor's own busy time, and a test that needs an idle loop
 * would fail for a reason of the worker's, not the prober's (seen once in CI). It waits for
 * such work to end, and says so if it never does.
 */
async function loopIdle(): Promise<void> {
  await eventually('an idle event loop (something else in this worker keeps it busy)', async () => {
    const start = performance.eventLoopUtilization();
    await new Promise((resolve) => setTimeout(resolve, 50));
    return performance.eventLoopUtilization(start).utilization < 0.5;
  }, 10_000);
}

/** Holds this process's event loop for `ms` (the monitor busy with other work). */
function busyWait(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin
  }
}

describe('latency judged on what is certainly the target\'s', () => {
  let world: DependencyWorld;
  let prober: HttpProber;
  let server: LocalServer | undefined;

  beforeEach(async () => {
    world = new DependencyWorld();
    prober = createHttpProber({ blockPrivate: false });
  });

  afterEach(async () => {
    await prober.close();
    await server?.close();
    server = undefined;
    await world.close();
  });

  async function probeAndRecord(handler: Handler) {
    server = await startServer(handler);
    const configuration = { ...DEFAULT_CONFIGURATION, ...PAGES_OVER_200_MS, url: `${server.origin}/health` };
    await world.endpoint(ENDPOINT, { configuration });
    const outcome = await prober.probe(configuration);
    return { outcome, check: await world.record(ENDPOINT, outcome) };
  }

  it('opens no latency signal when the answer waited for the monitor\'s own busy loop', async () => {
    // The target (in this process) answers at once, then the loop is held: the answer sits in
    // the socket until the loop is free again, as at saturation.
    const { outcome, check } = await probeAndRecord((_req, res) => {
      res.end('ok');
      busyWait(300);
    });
    expect(outcome.latency_ms).toBeGreaterThan(200);
    expect(outcome.loop_busy_ms).toBeGreaterThanOrEqual(outcome.latency_ms - 200);
    expect(check).toMatchObject({ latency_anomaly: false, latency_threshold_ms: 200, latency_unjudged: true });
    expect(await world.signals(ENDPOINT)).toEqual([]);
  });

  it('still pages when the target itself is slow and the loop idle', async () => {
    await loopIdle();
    const { outcome, check } = await probeAndRecord((_req, res) => {
      setTimeout(() => res.end('ok'), 300);
    });
    expect(outcome.latency_ms - (outcome.loop_busy_ms ?? 0)).toBeGreaterThan(200);
    expect(check).toMatchObject({ latency_anomaly: true });
    expect(await world.signals(ENDPOINT)).toEqual([{ type: 'AlertSignalTriggered', check_id: check.check_id }]);
  });
});
