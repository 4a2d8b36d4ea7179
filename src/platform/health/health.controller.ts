import { Controller, Get, HttpCode, Inject, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Public } from '../http/route-auth.js';
import { PLATFORM, type Platform } from '../platform.js';
import type { Behind, BehindReason } from '../projections/projection-runner.js';

const CHECK_TIMEOUT_MS = 2000;

async function probe(name: string, check: () => Promise<void>): Promise<[string, 'ok' | string]> {
  let deadline: NodeJS.Timeout | undefined;
  try {
    await Promise.race([check(), new Promise((_, reject) => (deadline = setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS)))]);
    return [name, 'ok'];
  } catch (error) {
    return [name, `unavailable: ${(error as Error).message}`];
  } finally {
    // A check that answered leaves no timer behind (else one per check per request, for 2 s).
    clearTimeout(deadline);
  }
}

/**
 * The views this process applies are live; otherwise names the ones that are not, grouped by
 * why (`rebuilding: rollups; not started yet: incidents, slos`), so a rebuild is not read as
 * every later projection rebuilding.
 */
function viewsLive(liveness: { live: boolean; behind: Behind[] }): void {
  if (liveness.live) return;
  const names = new Map<BehindReason, string[]>();
  for (const { name, why } of liveness.behind) names.set(why, [...(names.get(why) ?? []), name]);
  throw new Error([...names].map(([why, list]) => `${why}: ${list.join(', ')}`).join('; '));
}

@ApiExcludeController()
@Controller('health')
export class HealthController {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  /** The process is up (no dependency checked): restart it when this fails. */
  @Public()
  @Get('live')
  @HttpCode(200)
  live() {
    return { status: 'ok' };
  }

  /**
   * Every configured store answers and the views this process applies are live: route traffic
   * here only when this passes.
   */
  @Public()
  @Get('ready')
  async ready(@Res({ passthrough: true }) reply: FastifyReply) {
    const { events, views, coordination } = this.platform;
    const extra = this.platform.transport ? [probe('probe_transport', () => this.platform.transport!.ping())] : [];
    const runner = this.platform.runner;
    if (runner) extra.push(probe('projections', async () => viewsLive(runner.liveness())));
    const checks = Object.fromEntries(
      await Promise.all([probe('event_store', () => events.ping()), probe('read_store', () => views.ping()), probe('coordination_store', () => coordination.ping()), ...extra]),
    );
    const ready = Object.values(checks).every((value) => value === 'ok');
    reply.code(ready ? 200 : 503);
    return { status: ready ? 'ok' : 'unavailable', checks };
  }
}
