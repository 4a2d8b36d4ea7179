import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { startService, type StartedService } from './app/start-service.js';
import { projections, retiredProjections, upcasters } from './app/contexts.js';
import { ConfigError, loadConfig } from './platform/config/config.js';
import { createPlatform } from './platform/platform.js';

const PROJECTOR_ROLES = ['all', 'projector'];
/** Roles that publish or take probe jobs. Not `api`: it runs manual checks itself, so a queue
 * that is down must neither stop it starting nor take it out of a balancer's rotation. */
const TRANSPORT_ROLES = ['all', 'scheduler', 'prober'];
/** Roles that only make sense with a queue shared with other processes. */
const SHARED_QUEUE_ROLES = ['scheduler', 'prober'];

const formatHost = (address: string) => (address.includes(':') ? `[${address}]` : address);

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
  if (SHARED_QUEUE_ROLES.includes(config.role) && config.natsUrl === null) {
    process.stderr.write(`Invalid configuration:\n  - ROLE=${config.role} needs NATS_URL: the in-process probe queue reaches no other process (ROLE=all runs scheduler and prober together without NATS)\n`);
    process.exit(78);
  }
  const platform = await createPlatform(config, {
    projections: projections(),
    retiredProjections: retiredProjections(),
    upcasters: upcasters(),
    withRunner: PROJECTOR_ROLES.includes(config.role),
    withTransport: TRANSPORT_ROLES.includes(config.role),
  });
  let service: StartedService;
  try {
    service = await startService(platform, async (app) => {
      // Fastify's own listen: Nest's would log the failure as an error line (with the error's
      // text) before the one clear sentence below.
      await app.getHttpAdapter().getInstance().listen({ port: config.port, host: config.host });
      const bound = app.getHttpServer().address() as AddressInfo;
      // `role` and `pid` are bound on every line of this process's logger already
      const url = `http://${formatHost(bound.address)}:${bound.port}`;
      platform.logger.info({ url, docs: `${url}/docs`, admin_docs: `${url}/docs/admin`, port: bound.port, host: config.host, data_dir: config.dataDir }, 'service started');
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    process.stderr.write(`Cannot listen on ${config.host}:${config.port}: the address is already in use (another process holds it). Stop that process or choose another PORT/HOST.\n`);
    process.exit(1);
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    platform.logger.info({ signal }, 'draining: closing HTTP, finishing the current projection batch, closing stores');
    await service.stop();
    platform.logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  // The runner starts after the listen (startService): an on-start rebuild runs while
  // /health/live answers and /health/ready names it.
  await service.running;
}

main().catch((error) => {
  process.stderr.write(`Failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
