import { jest } from '@jest/globals';
import parsePrometheusTextFormat, { type PrometheusFamily, type PrometheusSample } from 'parse-prometheus-text-format';
import { eventually, monitorTarget, startTarget, type Target } from '../e2e/support.js';
import { startedBeforeAll } from '../support/started-before-all.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

jest.setTimeout(60_000);

const RATE_LIMIT = 5;
const METRICS_TOKEN = 'metrics-scraper-token-0123456789';

/**
 * `GET /metrics`, parsed by a Prometheus text-format parser into families by name. The parser
 * folds a labelled histogram into one label-less sample (it handles unlabelled ones only), so
 * histograms are read a second time declared untyped: each `_bucket`, `_sum` and `_count` series
 * then keeps its labels. Their declared type is checked on the first parse.
 */
async function scrape(t: TestApp, token: string | null = null): Promise<Map<string, PrometheusFamily>> {
  const response = await t.request('GET', '/metrics', { token });
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toContain('text/plain');
  const families = new Map(parsePrometheusTextFormat(response.body).map((family) => [family.name, family]));
  const histograms = [...families.values()].filter((family) => family.type === 'HISTOGRAM').map((family) => family.name);
  const untyped = histograms.reduce((text, name) => text.replace(`# TYPE ${name} histogram\n`, `# TYPE ${name} untyped\n`), response.body);
  // Read untyped, each label set starts a new `_bucket`/`_sum`/`_count` run: gather the runs.
  const series = new Map<string, PrometheusFamily>();
  for (const family of parsePrometheusTextFormat(untyped)) {
    if (families.has(family.name)) continue;
    const seen = series.get(family.name);
    if (seen) seen.metrics.push(...family.metrics);
    else series.set(family.name, family);
  }
  for (const [name, family] of series) families.set(name, family);
  return families;
}

function samples(families: Map<string, PrometheusFamily>, name: string, labels: Record<string, string> = {}): PrometheusSample[] {
  const family = families.get(name);
  if (!family) throw new Error(`no ${name} in the scrape`);
  return family.metrics.filter((sample) => Object.entries(labels).every(([key, value]) => sample.labels?.[key] === value));
}

function total(families: Map<string, PrometheusFamily>, name: string, labels: Record<string, string> = {}): number {
  return samples(families, name, labels).reduce((sum, sample) => sum + Number(sample.value), 0);
}

/** A verified, enabled endpoint on the local target, checked every second by the scheduler. */
async function monitoredEndpoint(t: TestApp, target: Target): Promise<{ teamId: number; endpointId: number }> {
  const team = await t.createTeam();
  const endpoint = await monitorTarget(t, team.id, target, 'health');
  return { teamId: team.id, endpointId: endpoint.id };
}

describe('GET /metrics after real traffic', () => {
  let t: TestApp;
  let target: Target;
  beforeAll(async () => {
    target = await startTarget();
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT) });
  });
  afterAll(async () => {
    await t.close();
    await target.close();
  });

  it('counts requests by route template and status, appends, checks, scheduling, lag, refusals and the process', async () => {
    const { teamId, endpointId } = await monitoredEndpoint(t, target);
    expect((await t.admin('POST', `/api/v2/teams/${teamId}/endpoints/${endpointId}/checks`)).statusCode).toBe(201);
    const { token } = await t.issueToken(teamId, ['monitoring:read'], 'viewer');
    const statuses: number[] = [];
    for (let i = 0; i < RATE_LIMIT + 2; i++) statuses.push((await t.request('GET', `/api/public/v2/endpoints/${endpointId}`, { token })).statusCode);
    expect(statuses).toEqual([...Array(RATE_LIMIT).fill(200), 429, 429]);
    expect((await t.request('GET', '/api/public/v2/no-such-route/123', { token })).statusCode).toBe(404);
    await eventually('a scheduled check recorded', async () => total(await scrape(t), 'monitor_checks_recorded_total', { source: 'scheduled' }) >= 1);

    const families = await scrape(t);

    // Requests: by route template with its parameter names, never the raw path or an id.
    expect(total(families, 'monitor_http_requests_total', { method: 'GET', route: '/api/public/v2/endpoints/:endpointID', status: '200' })).toBe(RATE_LIMIT);
    expect(total(families, 'monitor_http_requests_total', { route: '/api/public/v2/endpoints/:endpointID', status: '429' })).toBe(2);
    expect(families.get('monitor_http_request_duration_seconds')!.type).toBe('HISTOGRAM');
    expect(total(families, 'monitor_http_request_duration_seconds_count', { route: '/api/public/v2/endpoints/:endpointID', status: '200' })).toBe(RATE_LIMIT);
    const routes = samples(families, 'monitor_http_requests_total').map((sample) => sample.labels!.route);
    expect(routes).toContain('(unmatched)');
    for (const route of routes) expect(route).not.toMatch(/\/\d+(\/|$)/);
    expect(total(families, 'monitor_rate_limit_refusals_total')).toBe(2);

    // Event store appends and their latency.
    const appends = total(families, 'monitor_event_store_appends_total', { outcome: 'ok' });
    expect(appends).toBeGreaterThan(3);
    expect(families.get('monitor_event_store_append_duration_seconds')!.type).toBe('HISTOGRAM');
    expect(total(families, 'monitor_event_store_append_duration_seconds_count')).toBeGreaterThanOrEqual(appends);
    expect(total(families, 'monitor_events_appended_total')).toBeGreaterThanOrEqual(appends);

    // Checks by result and source, and the scheduler's delay histogram.
    expect(total(families, 'monitor_checks_recorded_total', { result: 'up', source: 'manual' })).toBe(1);
    expect(total(families, 'monitor_checks_recorded_total', { result: 'down' })).toBe(0);
    expect(families.get('monitor_scheduling_delay_seconds')!.type).toBe('HISTOGRAM');
    expect(total(families, 'monitor_scheduling_delay_seconds_count')).toBeGreaterThanOrEqual(1);

    // Probe jobs: in flight in this process and queued in the shared transport.
    expect(families.get('monitor_probe_jobs_in_flight')!.type).toBe('GAUGE');
    expect(Number(samples(families, 'monitor_probe_jobs_queued')[0].value)).toBeGreaterThanOrEqual(0);

    // Projection lag per projection, in events and seconds.
    const projections = (await t.platform.runner!.status()).map((status) => status.name).sort();
    expect(projections.length).toBeGreaterThan(0);
    expect(samples(families, 'monitor_projection_lag_events').map((sample) => sample.labels!.projection).sort()).toEqual(projections);
    expect(samples(families, 'monitor_projection_lag_seconds').map((sample) => sample.labels!.projection).sort()).toEqual(projections);
    for (const sample of samples(families, 'monitor_projection_lag_seconds')) expect(Number(sample.value)).toBeGreaterThanOrEqual(0);

    // Leases this process took: each projection's and each scheduler shard's once (nobody else holds them).
    for (const name of projections) expect(total(families, 'monitor_lease_acquisitions_total', { lease: `projection:${name}` })).toBe(1);
    expect(total(families, 'monitor_lease_acquisitions_total', { lease: 'scheduler-shard-0' })).toBe(1);
    expect(samples(families, 'monitor_lease_acquisitions_total').every((sample) => !/:\d+$/.test(sample.labels!.lease))).toBe(true);
    // The prober's region announcement is labelled by its region, not by this process's identity.
    expect(total(families, 'monitor_lease_acquisitions_total', { lease: 'prober-region:local' })).toBe(1);
    expect(samples(families, 'monitor_lease_acquisitions_total').some((sample) => sample.labels!.lease.includes(t.platform.instanceId))).toBe(false);

    // Process defaults, every series labelled with the process role.
    expect(Number(samples(families, 'process_cpu_user_seconds_total')[0].value)).toBeGreaterThan(0);
    expect(Number(samples(families, 'nodejs_heap_size_used_bytes')[0].value)).toBeGreaterThan(0);
    expect(samples(families, 'process_cpu_user_seconds_total')[0].labels).toMatchObject({ role: 'all' });

    // No per-endpoint series unless asked for.
    expect(families.has('monitor_endpoint_up')).toBe(false);
  });

  it('reports lag while a projection is behind: events and the age of the oldest unapplied one', async () => {
    const runner = t.platform.runner!;
    await runner.stop();
    try {
      await t.platform.events.append('lag-probe-1', [{ type: 'LagProbe', data: {} }], { expectedRevision: 'any' });
      // While the runner is stopped each projection's oldest unapplied event stays put, so its age
      // only grows. Probes keep appending checks meanwhile, so a projection can fall behind later
      // than the others: wait until every projection that is behind is at least a second behind.
      const behindBySecondsWhereBehindInEvents = (scraped: Awaited<ReturnType<typeof scrape>>) => {
        const behind = samples(scraped, 'monitor_projection_lag_events').filter((sample) => Number(sample.value) >= 1);
        const seconds = behind.map((sample) => Number(samples(scraped, 'monitor_projection_lag_seconds', { projection: sample.labels!.projection })[0].value));
        return { behind, seconds };
      };
      const families = await eventually('every lagging projection a second behind', async () => {
        const scraped = await scrape(t);
        const { behind, seconds } = behindBySecondsWhereBehindInEvents(scraped);
        return behind.length > 0 && seconds.every((value) => value >= 1) ? scraped : null;
      });
      const { behind, seconds } = behindBySecondsWhereBehindInEvents(families);
      expect(behind.length).toBeGreaterThan(0);
      for (const value of seconds) expect(value).toBeGreaterThanOrEqual(1);
    } finally {
      await runner.start();
    }
  });
});

describe('GET /metrics options', () => {
  let t: TestApp;
  let target: Target;
  beforeAll(async () => {
    target = await startTarget();
    t = await startTestApp({ METRICS_TOKEN, METRICS_PER_ENDPOINT: 'true' });
  });
  afterAll(async () => {
    await t.close();
    await target.close();
  });

  it('asks for METRICS_TOKEN as a bearer token when it is set', async () => {
    const missing = await t.request('GET', '/metrics');
    expect(missing.statusCode).toBe(401);
    expect(missing.headers['content-type']).toContain('application/problem+json');
    expect((await t.request('GET', '/metrics', { token: 'wrong-token-0123456789' })).statusCode).toBe(401);
    expect((await t.request('GET', '/metrics', { token: METRICS_TOKEN })).statusCode).toBe(200);
  });

  it('exports monitor_endpoint_up and a latency histogram per endpoint when METRICS_PER_ENDPOINT=true', async () => {
    const { endpointId } = await monitoredEndpoint(t, target);
    const label = { endpoint_id: String(endpointId) };
    await eventually('the endpoint seen up', async () => {
      const families = await scrape(t, METRICS_TOKEN);
      return families.has('monitor_endpoint_up') && samples(families, 'monitor_endpoint_up', label)[0]?.value === '1';
    });
    target.mode = { status: 503, delayMs: 0 };
    await eventually('the endpoint seen down', async () => samples(await scrape(t, METRICS_TOKEN), 'monitor_endpoint_up', label)[0]?.value === '0');
    const families = await scrape(t, METRICS_TOKEN);
    expect(families.get('monitor_endpoint_latency_seconds')!.type).toBe('HISTOGRAM');
    expect(total(families, 'monitor_endpoint_latency_seconds_count', label)).toBeGreaterThanOrEqual(2);
  });
});

describe('GET /metrics: the event-loop delay series', () => {
  const t = startedBeforeAll(() => startTestApp(), (started) => started.close());

  const LOOP_DELAY_GAUGES = ['min', 'max', 'mean', 'stddev', 'p50', 'p90', 'p99'].map((stat) => `nodejs_eventloop_lag_${stat}_seconds`);

  // The histogram behind them starts at the first scrape (an unscraped service does not sample
  // the loop a hundred times a second); that scrape still reads samples, never an empty histogram.
  it('reads samples of the 10 ms histogram from the first scrape on, reset at each scrape', async () => {
    for (let scrapeNumber = 1; scrapeNumber <= 2; scrapeNumber++) {
      // The first scrape waits for samples itself. Later ones are seconds apart in use; here a
      // reset histogram takes no sample in its first 10 ms, and on a loaded host its timer may
      // not run for longer: scrape again until one has samples (each scrape resets it).
      const families =
        scrapeNumber === 1
          ? await scrape(t)
          : await eventually('a scrape after the reset that has samples', async () => {
              await new Promise((resolve) => setTimeout(resolve, 50));
              const scraped = await scrape(t);
              return Number.isFinite(Number(samples(scraped, 'nodejs_eventloop_lag_min_seconds')[0].value)) && scraped;
            });
      const value = (name: string) => Number(samples(families, name)[0].value);
      for (const name of LOOP_DELAY_GAUGES) {
        expect(Number.isFinite(value(name))).toBe(true);
        expect(value(name)).toBeGreaterThanOrEqual(0);
      }
      // Each sample is the time between two runs of the 10 ms sampling timer, the 10 ms included.
      expect(value('nodejs_eventloop_lag_min_seconds')).toBeGreaterThanOrEqual(0.009);
      expect(value('nodejs_eventloop_lag_min_seconds')).toBeLessThanOrEqual(value('nodejs_eventloop_lag_p50_seconds'));
      expect(value('nodejs_eventloop_lag_p50_seconds')).toBeLessThanOrEqual(value('nodejs_eventloop_lag_max_seconds'));
      // Set by an immediate queued at the scrape, so read by the next one (prom-client's way).
      if (scrapeNumber > 1) expect(value('nodejs_eventloop_lag_seconds')).toBeGreaterThan(0);
      expect(samples(families, 'nodejs_eventloop_lag_p99_seconds')[0].labels).toMatchObject({ role: 'all' });
    }
  });
});
