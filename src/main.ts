import 'reflect-metadata';
import { createHttpApp } from './app/http-app.js';
import { projections } from './app/contexts.js';
import { ConfigError, loadConfig } from './platform/config/config.js';
import { createPlatform } from './platform/platform.js';

const PROJECTOR_ROLES = ['all', 'projector'];
const TRANSPORT_ROLES = ['all', 'api', 'scheduler', 'prober'];

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
  const platform = await createPlatform(config, {
    projections: projections(),
    withRunner: PROJECTOR_ROLES.includes(config.role),
    withTransport: TRANSPORT_ROLES.includes(config.role),
  });
  await platform.runner?.start();
  const app = await createHttpApp(platform);
  await app.listen({ port: config.port, host: config.host });
  platform.logger.info({ port: config.port, host: config.host, role: config.role, data_dir: config.dataDir }, 'service started');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    platform.logger.info({ signal }, 'draining: closing HTTP, finishing the current projection batch, closing stores');
    await app.close();
    await platform.close();
    platform.logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error) => {
  process.stderr.write(`Failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
