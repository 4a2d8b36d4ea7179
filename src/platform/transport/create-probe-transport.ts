import { InProcessTransport } from './in-process/in-process-transport.js';
import { NatsTransport, type NatsTransportOptions } from './nats/nats-transport.js';
import type { ProbeTransport } from './probe-transport.port.js';

export interface ProbeTransportConfig {
  /** NATS_URL; null runs the in-process queue (embedded, single process only). */
  natsUrl: string | null;
  /** Stream and consumer names, for tests and side-by-side deployments. */
  nats?: Omit<NatsTransportOptions, 'url'>;
}

export async function createProbeTransport(config: ProbeTransportConfig): Promise<ProbeTransport> {
  if (config.natsUrl === null) return new InProcessTransport();
  return NatsTransport.connect({ ...config.nats, url: config.natsUrl });
}
