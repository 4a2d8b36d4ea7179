import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { DEFAULT_REGION } from '../config/region.js';
import type { EventStore } from '../event-store/event-store.port.js';
import type { Logger } from '../logging/logger.js';
import type { ProjectionRunner } from '../projections/projection-runner.js';
import type { ProbeTransport } from '../transport/probe-transport.port.js';
import { withoutProcessIdentity } from '../coordination/process-identity.js';

/** What a recorded check tells the metrics (a subset of the monitoring context's CheckRecordedData). */
export interface RecordedCheckSample {
  endpoint_id: number;
  success: boolean;
  latency_ms: number;
  source: string;
  /** Absent: `local`. */
  region?: string;
}

export interface MetricsOptions {
  role: string;
  /** `monitor_endpoint_up` and `monitor_endpoint_latency_seconds` per endpoint (METRICS_PER_ENDPOINT). */
  perEndpoint: boolean;
}

const SECONDS_FAST = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const SECONDS_HTTP = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const SECONDS_SCHEDULING = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const SECONDS_PROBE = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** prom-client's event-loop delay sampling interval (its default), kept: see `LoopDelayGauges`. */
const LOOP_DELAY_RESOLUTION_MS = 10;
/**
 * prom-client makes its own histogram for these and has no switch to leave one default out: it
 * gets a resolution of a day (one wake-up a day) and its series are read from ours instead.
 */
const UNUSED_RESOLUTION_MS = 86_400_000;
/** How long the first scrape waits for the histogram's first samples. */
const FIRST_SAMPLES_WAIT_MS = 200;

/**
 * This process's Prometheus metrics, served at `GET /metrics`. One registry per platform (not
 * prom-client's global one), so several platforms in one process (tests) never collide. Every
 * label value is bounded: route templates, never raw paths or ids; endpoint ids only when the
 * operator opts in.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: 'monitor_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'monitor_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method, route template and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: SECONDS_HTTP,
    registers: [this.registry],
  });
  readonly appends = new Counter({
    name: 'monitor_event_store_appends_total',
    help: 'Event store append calls, by outcome (ok, conflict, unavailable, error).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly appendedEvents = new Counter({
    name: 'monitor_events_appended_total',
    help: 'Events appended to the event store.',
    registers: [this.registry],
  });
  readonly appendDuration = new Histogram({
    name: 'monitor_event_store_append_duration_seconds',
    help: 'Time of one event store append call, whatever its outcome.',
    buckets: SECONDS_FAST,
    registers: [this.registry],
  });
  readonly checksRecorded = new Counter({
    name: 'monitor_checks_recorded_total',
    help: 'Checks recorded by this process, by result (up, down) and source (scheduled, manual).',
    labelNames: ['result', 'source'] as const,
    registers: [this.registry],
  });
  readonly checksByRegion = new Counter({
    name: 'monitor_checks_by_region_total',
    help: 'Checks recorded by this process, by the region of the prober that took them (PROBE_REGION) and result (up, down).',
    labelNames: ['region', 'result'] as const,
    registers: [this.registry],
  });
  readonly schedulingDelay = new Histogram({
    name: 'monitor_scheduling_delay_seconds',
    help: 'Time from a check slot being due to its probe job being published.',
    buckets: SECONDS_SCHEDULING,
    registers: [this.registry],
  });
  readonly probeJobsInFlight = new Gauge({
    name: 'monitor_probe_jobs_in_flight',
    help: 'Probe jobs this process is running now.',
    registers: [this.registry],
  });
  readonly probeJobsDropped = new Counter({
    name: 'monitor_probe_jobs_dropped_total',
    help: 'Probe jobs a prober dropped without probing, by reason (stale: older than the endpoint interval; max_deliver: failed on its last delivery).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly rateLimitRefusals = new Counter({
    name: 'monitor_rate_limit_refusals_total',
    help: 'Requests refused with 429 by the per-token rate limit.',
    registers: [this.registry],
  });
  readonly leaseAcquisitions = new Counter({
    name: 'monitor_lease_acquisitions_total',
    help: 'Leases this process took and did not hold (free, or their holder stopped renewing), by lease; notification channel claims count under one label.',
    labelNames: ['lease'] as const,
    registers: [this.registry],
  });
  private readonly endpointUp: Gauge<'endpoint_id'> | null;
  private readonly loopDelay = new LoopDelayGauges(this.registry);
  private readonly endpointLatency: Histogram<'endpoint_id'> | null;

  constructor(options: MetricsOptions) {
    this.registry.setDefaultLabels({ role: options.role });
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: UNUSED_RESOLUTION_MS });
    this.loopDelay.install();
    this.endpointUp = options.perEndpoint
      ? new Gauge({
          name: 'monitor_endpoint_up',
          help: 'Result of the last check this process recorded for the endpoint: 1 up, 0 down.',
          labelNames: ['endpoint_id'] as const,
          registers: [this.registry],
        })
      : null;
    this.endpointLatency = options.perEndpoint
      ? new Histogram({
          name: 'monitor_endpoint_latency_seconds',
          help: 'Latency of the checks this process recorded for the endpoint.',
          labelNames: ['endpoint_id'] as const,
          buckets: SECONDS_PROBE,
          registers: [this.registry],
        })
      : null;
  }

  /** The text of a scrape; the first one starts the event-loop delay histogram (`LoopDelayGauges`). */
  async scrape(): Promise<string> {
    await this.loopDelay.started();
    return this.registry.metrics();
  }

  checkRecorded(check: RecordedCheckSample): void {
    this.checksRecorded.inc({ result: check.success ? 'up' : 'down', source: check.source });
    this.checksByRegion.inc({ region: check.region ?? DEFAULT_REGION, result: check.success ? 'up' : 'down' });
    const endpoint = String(check.endpoint_id);
    this.endpointUp?.set({ endpoint_id: endpoint }, check.success ? 1 : 0);
    this.endpointLatency?.observe({ endpoint_id: endpoint }, check.latency_ms / 1000);
  }

  /**
   * Counts a lease taken and returns its label. Per-id claims (`notification-channel:<id>`) and
   * per-process announcements (`prober-region:<region>:<process>`) share their prefix's label,
   * so labels stay bounded.
   */
  leaseAcquired(name: string): string {
    const lease = withoutProcessIdentity(name).replace(/:\d+$/, '');
    this.leaseAcquisitions.inc({ lease });
    return lease;
  }

  /**
   * Projection lag, read from the runner at scrape time: events behind the log's head, and the
   * age of the oldest event not applied yet (0 when caught up).
   */
  watchProjections(runner: ProjectionRunner, events: EventStore, logger: Logger): void {
    const lag = new Map<string, { events: number; seconds: number }>();
    const read = async () => {
      try {
        const now = Date.now();
        lag.clear();
        for (const status of await runner.status()) {
          let seconds = 0;
          if (status.lag > 0) {
            const [oldest] = await events.readAll({ after: status.position, maxCount: 1 });
            if (oldest) seconds = Math.max(0, (now - Date.parse(oldest.recordedAt)) / 1000);
          }
          lag.set(status.name, { events: status.lag, seconds });
        }
      } catch (error) {
        logger.warn({ err: error }, 'metrics: projection lag unavailable for this scrape');
      }
    };
    // Both gauges are collected in the same scrape: they share one reading.
    let reading: Promise<void> | null = null;
    const refresh = () => (reading ??= read().finally(() => (reading = null)));
    const gauge = (name: string, help: string, pick: (value: { events: number; seconds: number }) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['projection'] as const,
        registers: [this.registry],
        async collect() {
          await refresh();
          this.reset();
          for (const [projection, value] of lag) this.set({ projection }, pick(value));
        },
      });
    gauge('monitor_projection_lag_events', 'Events in the log not yet applied to the projection.', (value) => value.events);
    gauge('monitor_projection_lag_seconds', 'Age of the oldest event not yet applied to the projection; 0 when caught up.', (value) => value.seconds);
    new Gauge({
      name: 'monitor_projection_rebuild_remaining_events',
      help: "Events between a rebuild's new generation and the log's head as of its last batch; present only while this process rebuilds the projection.",
      labelNames: ['projection'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { name, remaining } of runner.rebuildsRunning()) this.set({ projection: name }, remaining);
      },
    });
  }

  /** Jobs waiting in the shared probe queue, asked of the transport at scrape time. */
  watchQueue(transport: ProbeTransport, logger: Logger): void {
    new Gauge({
      name: 'monitor_probe_jobs_queued',
      help: 'Probe jobs published and not yet taken by a prober (the shared queue).',
      registers: [this.registry],
      async collect() {
        try {
          this.set(await transport.pending());
        } catch (error) {
          logger.warn({ err: error }, 'metrics: probe queue depth unavailable for this scrape');
        }
      },
    });
  }
}

const LOOP_DELAY_GAUGES = {
  min: 'nodejs_eventloop_lag_min_seconds',
  max: 'nodejs_eventloop_lag_max_seconds',
  mean: 'nodejs_eventloop_lag_mean_seconds',
  stddev: 'nodejs_eventloop_lag_stddev_seconds',
  p50: 'nodejs_eventloop_lag_p50_seconds',
  p90: 'nodejs_eventloop_lag_p90_seconds',
  p99: 'nodejs_eventloop_lag_p99_seconds',
} as const;

/**
 * prom-client's event-loop delay series (`nodejs_eventloop_lag_seconds` and the seven read from a
 * histogram), with the histogram started by the first scrape instead of at start. Sampling every
 * 10 ms wakes the process a hundred times a second: about 3.5 ms of CPU a second, a third of an
 * idle service's, paid whether anyone reads the series or not. From the second scrape on each
 * reading is prom-client's (10 ms resolution, reset at every scrape); the first covers the few
 * milliseconds it waits for the histogram's first samples instead of the time since start.
 */
class LoopDelayGauges {
  private histogram: IntervalHistogram | null = null;
  private starting: Promise<void> | null = null;

  constructor(private readonly registry: Registry) {}

  /** Takes over the collection prom-client hangs on `nodejs_eventloop_lag_seconds` (its typings leave `collect` out). */
  install(): void {
    const lag = this.gauge('nodejs_eventloop_lag_seconds');
    (lag as unknown as { collect: () => void }).collect = () => this.collect(lag);
  }

  /** Starts the histogram on the first call and waits for its first samples (none is taken in its first interval). */
  started(): Promise<void> {
    return (this.starting ??= (async () => {
      const histogram = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
      histogram.enable();
      const deadline = performance.now() + FIRST_SAMPLES_WAIT_MS;
      while (histogram.count < 2 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, LOOP_DELAY_RESOLUTION_MS));
      this.histogram = histogram;
    })());
  }

  private gauge(name: string): Gauge {
    return this.registry.getSingleMetric(name) as Gauge;
  }

  /**
   * Synchronous, as prom-client's: the registry reads every metric at once, and this gauge's
   * collection sets the seven others before they are read (it is registered first).
   */
  private collect(lag: Gauge): void {
    // As prom-client: the time until the loop runs an immediate queued now.
    const start = process.hrtime.bigint();
    setImmediate(() => lag.set(Number(process.hrtime.bigint() - start) / 1e9));
    const histogram = this.histogram;
    if (!histogram) return;
    this.gauge(LOOP_DELAY_GAUGES.min).set(histogram.min / 1e9);
    this.gauge(LOOP_DELAY_GAUGES.max).set(histogram.max / 1e9);
    this.gauge(LOOP_DELAY_GAUGES.mean).set(histogram.mean / 1e9);
    this.gauge(LOOP_DELAY_GAUGES.stddev).set(histogram.stddev / 1e9);
    this.gauge(LOOP_DELAY_GAUGES.p50).set(histogram.percentile(50) / 1e9);
    this.gauge(LOOP_DELAY_GAUGES.p90).set(histogram.percentile(90) / 1e9);
    this.gauge(LOOP_DELAY_GAUGES.p99).set(histogram.percentile(99) / 1e9);
    histogram.reset();
  }
}
