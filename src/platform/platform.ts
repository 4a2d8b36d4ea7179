import { createHash } from 'node:crypto';
import type { AppConfig } from './config/config.js';
import type { CoordinationStore } from './coordination/coordination.port.js';
import { createCoordinationStore } from './coordination/create-coordination-store.js';
import { newProcessIdentity } from './coordination/process-identity.js';
import { LeaseKeeper } from './coordination/lease-keeper.js';
import { createEventStore } from './event-store/create-event-store.js';
import type { EventStore } from './event-store/event-store.port.js';
import { UpcasterRegistry, withUpcasting } from './event-store/upcasting.js';
import { IdAllocator } from './ids/id-allocator.js';
import { createLogger, type Logger } from './logging/logger.js';
import type { Projection } from './projections/projection.js';
import { ProjectionRunner } from './projections/projection-runner.js';
import { ReadYourWrites, ViewReader, readableVersions } from './projections/views.js';
import type { ProbeTransport } from './transport/probe-transport.port.js';
import { createProbeTransport } from './transport/create-probe-transport.js';
import { createReadStore } from './read-store/create-read-store.js';
import type { ReadStore } from './read-store/read-store.port.js';
import { resolveAdminToken } from './admin-token.js';
import { instrumentedEventStore } from './metrics/instrumented-event-store.js';
import { Metrics } from './metrics/metrics.js';

export const PLATFORM = Symbol('PLATFORM');

/** The ports and shared services every context uses; built once per process, outside Nest. */
export interface Platform {
  config: AppConfig;
  logger: Logger;
  events: EventStore;
  /** The same log as stored: no upcasting (what the hash chain covers; docs/audit.md). Closed with `events`. */
  storedEvents: EventStore;
  views: ReadStore;
  coordination: CoordinationStore;
  /** Every lease this process wants, renewed together (one write per renewal period). */
  leases: LeaseKeeper;
  ids: IdAllocator;
  reader: ViewReader;
  freshness: ReadYourWrites;
  /** Probe job queue; null in processes that neither schedule, probe nor take manual checks. */
  transport: ProbeTransport | null;
  /** Present in processes that apply projections (roles all and projector). */
  runner: ProjectionRunner | null;
  adminToken: string;
  /** Key that signs pagination cursors; the same in every process sharing the stores. */
  cursorKey: Buffer;
  /** Identity of this process for leases: `<host>:<pid>:<random>`, new at every start (process-identity.ts). */
  instanceId: string;
  /** This process's Prometheus metrics (`GET /metrics`). */
  metrics: Metrics;
  close(): Promise<void>;
}

export interface PlatformOptions {
  projections: Projection[];
  upcasters?: UpcasterRegistry;
  withTransport: boolean;
  /** Build a runner (it is started by the caller). */
  withRunner: boolean;
  logger?: Logger;
  /** Projections that left the catalogue: their collections are dropped with the stale generations (`RunnerOptions.retired`). */
  retiredProjections?: readonly string[];
  /** False in operator CLIs: no admin token is generated into DATA_DIR (default true). */
  mintAdminToken?: boolean;
}

export async function createPlatform(config: AppConfig, options: PlatformOptions): Promise<Platform> {
  const logger = options.logger ?? createLogger(config.logLevel, { role: config.role });
  const admin = resolveAdminToken(config.adminToken, config.dataDir, { mint: options.mintAdminToken });
  if (admin.generated) {
    process.stderr.write(`\nGenerated admin token (shown once; also kept in ${admin.file}):\n  ${admin.token}\n\n`);
  }
  const instanceId = newProcessIdentity();
  const metrics = new Metrics({ role: config.role, perEndpoint: config.metricsPerEndpoint });
  const storedEvents = createEventStore({ dataDir: config.dataDir, eventStoreUrl: config.eventStoreUrl });
  const events = instrumentedEventStore(options.upcasters ? withUpcasting(storedEvents, options.upcasters) : storedEvents, metrics);
  const views = await createReadStore({ dataDir: config.dataDir, mongodbUrl: config.mongodbUrl });
  const coordination = await createCoordinationStore({
    dataDir: config.dataDir,
    mongodbUrl: config.mongodbUrl,
    onLeaseAcquired: (grant) => {
      // Per-id claims (notification channels) come and go with every lane: counted, not logged.
      if (metrics.leaseAcquired(grant.name) === grant.name) logger.info({ lease: grant.name, epoch: grant.epoch }, 'lease acquired');
    },
  });
  const leases = new LeaseKeeper(coordination, instanceId, { logger });
  const transport = options.withTransport
    ? await createProbeTransport({
        natsUrl: config.natsUrl,
        limits: { maxDeliver: config.natsMaxDeliver },
        nats: { replicas: config.natsStreamReplicas, maxAckPending: config.natsMaxAckPending },
        region: config.probeRegion,
      })
    : null;
  const runner = options.withRunner
    ? new ProjectionRunner(events, views, options.projections, { owner: instanceId, logger, coordination, leases, retired: options.retiredProjections })
    : null;
  if (runner) metrics.watchProjections(runner, events, logger);
  if (transport) metrics.watchQueue(transport, logger);
  const reader = new ViewReader(views, undefined, readableVersions(options.projections));
  return {
    config,
    logger,
    events,
    storedEvents,
    views,
    coordination,
    leases,
    ids: new IdAllocator(events),
    reader,
    // The views a write waits for are those of the projections this process is configured with
    // (the runner's, or, in an API-only process, those the projector processes apply).
    freshness: new ReadYourWrites(reader, runner, options.projections, { timeoutMs: config.readYourWritesMs, pollMs: 20 }),
    transport,
    runner,
    adminToken: admin.token,
    cursorKey: createHash('sha256').update(`cursor-key:${config.cursorSigningKey ?? admin.token}`).digest(),
    instanceId,
    metrics,
    async close() {
      await runner?.stop();
      await leases.close();
      await Promise.allSettled([transport?.close(), events.close(), views.close(), coordination.close()]);
    },
  };
}
