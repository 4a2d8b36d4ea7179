import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { PeriodicTask } from '../../platform/periodic-task.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { VerificationStopped, verifyHistory } from './verify.js';

const VERIFICATION_ROLES = ['all', 'projector'];
const DAY_MS = 86_400_000;
/** The first pass waits this long after start, as retention's does: a starting service first catches up. */
const FIRST_PASS_DELAY_MS = 10 * 60_000;
/**
 * One process of a deployment verifies each day: the one holding this lease. It is renewed at
 * each pass and outlives the day, so another process takes over only after the holder stopped
 * renewing (a clean shutdown releases it at once).
 */
export const VERIFICATION_LEASE = 'audit-verification';
const LEASE_TTL_MS = DAY_MS + 2 * 3_600_000;

/**
 * The daily verification pass (docs/audit.md): walks every stream's hash chain as stored, logs
 * each broken stream and sets `monitor_audit_chain_broken_streams` (and the time of the pass in
 * `monitor_audit_chain_verified_timestamp_seconds`, 0 until this process ran one).
 */
@Injectable()
export class AuditVerificationWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly task = new PeriodicTask(() => this.pass(), { firstDelayMs: FIRST_PASS_DELAY_MS, everyMs: DAY_MS });
  private readonly broken: Gauge;
  private readonly verifiedAt: Gauge;
  private started = false;

  constructor(@Inject(PLATFORM) private readonly platform: Platform) {
    const registers = [platform.metrics.registry];
    this.broken = new Gauge({
      name: 'monitor_audit_chain_broken_streams',
      help: "Streams whose hash chain did not verify at this process's last daily verification pass (docs/audit.md).",
      registers,
    });
    this.verifiedAt = new Gauge({
      name: 'monitor_audit_chain_verified_timestamp_seconds',
      help: "Unix time this process's last daily verification pass ended; 0 before the first.",
      registers,
    });
  }

  onApplicationBootstrap(): void {
    if (!VERIFICATION_ROLES.includes(this.platform.config.role) || !this.platform.runner) return;
    this.started = true;
    this.task.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task.stop();
    if (this.started) await this.platform.coordination.releaseLease(VERIFICATION_LEASE, this.platform.instanceId).catch(() => undefined);
  }

  /** One pass, when this process holds the verification lease; failures are logged and retried the next day. */
  async pass(): Promise<void> {
    const { platform } = this;
    try {
      const lease = await platform.coordination.acquireLease(VERIFICATION_LEASE, platform.instanceId, LEASE_TTL_MS);
      if (!lease) return;
      const started = Date.now();
      const report = await verifyHistory(platform.storedEvents, {}, { shouldStop: this.task.stopping });
      this.broken.set(report.broken.length);
      this.verifiedAt.set(Math.floor(Date.now() / 1000));
      const summary = { streams_checked: report.streams_checked, events_checked: report.events_checked, duration_ms: Date.now() - started };
      if (report.intact) platform.logger.info(summary, 'audit: every hash chain verified intact');
      else {
        platform.logger.error(
          { ...summary, broken: report.broken.map(({ stream, revision, problem }) => ({ stream, revision, problem })) },
          `audit: ${report.broken.length} hash chain(s) broken; npm run history -- verify names them (docs/audit.md)`,
        );
      }
    } catch (error) {
      if (error instanceof VerificationStopped) return;
      platform.logger.warn({ err: error }, 'audit: verification pass failed; next attempt in a day');
    }
  }
}
