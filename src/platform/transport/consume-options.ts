import type { ConsumeOptions, QueueLimits } from './probe-transport.port.js';

/** Rejects options no adapter can honour, so a misconfigured worker fails at start. */
export function assertConsumeOptions(options: ConsumeOptions): void {
  if (!Number.isInteger(options.maxInFlight) || options.maxInFlight < 1) {
    throw new RangeError(`maxInFlight must be a positive integer, got ${options.maxInFlight}`);
  }
  if (!Number.isFinite(options.ackWaitMs) || options.ackWaitMs <= 0) {
    throw new RangeError(`ackWaitMs must be a positive number of milliseconds, got ${options.ackWaitMs}`);
  }
}

export function assertQueueLimits(limits: QueueLimits): void {
  if (!Number.isInteger(limits.maxDeliver) || limits.maxDeliver < 1) {
    throw new RangeError(`maxDeliver must be a positive integer, got ${limits.maxDeliver}`);
  }
}
