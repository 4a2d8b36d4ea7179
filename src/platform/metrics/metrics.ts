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
  private readonly endpointLatency: Histogram<'endpoint_id'> | null;

  constructor(options: MetricsOptions) {
    this.registry.setDefaultLabels({ role: options.role });
    collectDefaultMetrics({ register: this.registry });
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
