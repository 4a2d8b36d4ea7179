import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Platform } from '../platform/platform.js';
import { createHttpApp } from './http-app.js';

export interface StartedService {
  app: NestFastifyApplication;
  /**
   * Settles once the projection runner has started (every processor live, an on-start rebuild
   * swapped in), or once a stop during the start ended it; rejects only with a failure that no
   * stop explains.
   */
  running: Promise<void>;
  /** Closes HTTP, then the platform (the runner ends its batch under way, stores close). */
  stop(): Promise<void>;
}

/**
 * The one start order of a service process, for src/main.ts and the tests alike: the HTTP app is
 * built and `listen` called first, then the projection runner starts. An on-start rebuild (a
 * projection version changed) takes minutes on a large log; a process that answered nothing
 * meanwhile, /health/live included, was restarted mid-rebuild by a liveness probe, for ever.
 * Meanwhile /health/ready names the projections not yet running. A listen that fails closes
 * the app and the platform and throws.
 */
export async function startService(platform: Platform, listen: (app: NestFastifyApplication) => PromiseLike<unknown>): Promise<StartedService> {
  const app = await createHttpApp(platform);
  try {
    await listen(app);
  } catch (error) {
    await app.close().catch(() => undefined);
    await platform.close().catch(() => undefined);
    throw error;
  }
  let stopping: Promise<void> | null = null;
  // A stop during the start ends it (the runner's stop ends a rebuild between batches, its
  // generation left unswapped and checkpointed); a failure meanwhile is the stop's, not the start's.
  const running = (platform.runner?.start() ?? Promise.resolve()).catch((error) => {
    if (stopping === null) throw error;
  });
  // Observed here so a failure is never unhandled; the caller awaits `running` for it.
  running.catch(() => undefined);
  return {
    app,
    running,
    stop() {
      stopping ??= (async () => {
        await app.close();
        await platform.close();
      })();
      return stopping;
    },
  };
}
