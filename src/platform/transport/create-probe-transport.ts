import { InProcessTransport } from './in-process/in-process-transport.js';
import { NatsTransport, type NatsTransportOptions } from './nats/nats-transport.js';
import type { ProbeTransport, QueueLimits } from './probe-transport.port.js';

export interface ProbeTransportConfig {
  /** NATS_URL; null runs the in-process queue (embedded, single process only). */
  natsUrl: string | null;
  /** Limits both adapters apply (NATS_MAX_DELIVER). */
  limits?: Partial<QueueLimits>;
  /** Stream and consumer names and settings (NATS_STREAM_REPLICAS, NATS_MAX_ACK_PENDING). */
  nats?: Omit<NatsTransportOptions, 'url' | 'region' | keyof QueueLimits>;
  /** PROBE_REGION: this process's consumers take the jobs of this region (and those without one). */
  region?: string;
}

export async function createProbeTransport(config: ProbeTransportConfig): Promise<ProbeTransport> {
  if (config.natsUrl === null) return new InProcessTransport(config.limits, config.region);
  return NatsTransport.connect({ ...config.nats, ...config.limits, url: config.natsUrl, region: config.region });
}
