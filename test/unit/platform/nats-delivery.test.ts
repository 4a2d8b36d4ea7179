import { createRequire } from 'node:module';
import { deliveryOf } from '../../../src/platform/transport/nats/nats-transport.js';

// nats.js's own reading of a delivery's reply subject (what `JsMsg.info` returns).
const { parseInfo } = createRequire(import.meta.url)('nats/lib/jetstream/jsmsg.js') as { parseInfo(reply: string): { redeliveryCount: number; timestampNanos: number } };

/** A message as nats.js hands it over: `info` parsed from the reply subject on demand. */
const message = (reply: string | undefined) => ({
  reply,
  get info() {
    return parseInfo(reply ?? '') as never;
  },
});

describe('deliveryOf (a NATS delivery read from its reply subject)', () => {
  const replies = [
    // The server's older form, and the newer one with domain and account hash (with and without its last token).
    '$JS.ACK.PROBES.probers.1.42.40.1732759000123456789.17',
    '$JS.ACK.PROBES.probers.3.42.40.1732759000123456789.0',
    '$JS.ACK._.ACCHASH.PROBES.probers.2.9007199254740993.12.1764290000999999999.5.r4nd0m',
    '$JS.ACK.hub.ACCHASH.PROBES_REGIONS.probers-eu.7.1.1.1764290000000000001.0',
  ];

  it.each(replies)('reads what nats.js reads: %s', (reply) => {
    const info = parseInfo(reply);
    expect(deliveryOf(message(reply))).toEqual({ deliveryCount: info.redeliveryCount, storedAtMs: info.timestampNanos / 1e6 });
  });

  it('leaves a subject of another form (or none) to nats.js, which refuses it as before', () => {
    expect(() => deliveryOf(message('_INBOX.abc.1'))).toThrow('not js message');
    expect(() => deliveryOf(message('$JS.ACK.PROBES.probers.1.42'))).toThrow('not js message');
    expect(() => deliveryOf(message(undefined))).toThrow('not js message');
  });
});
