import type { LookupAddress } from 'node:dns';
import {
  BlockedAddressError,
  blockedRange,
  createGuardedLookup,
  type Resolver,
} from '../../../src/probing/prober/address-guard.js';

describe('blockedRange', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['fd00::1', 'uniqueLocal'],
    ['169.254.169.254', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'linkLocal'],
  ])('refuses %s (%s)', (ip, range) => {
    expect(blockedRange(ip)).toBe(range);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows public %s', (ip) => {
    expect(blockedRange(ip)).toBeNull();
  });

  it('refuses what it cannot parse', () => {
    expect(blockedRange('not-an-ip')).toBe('unparseable');
  });
});

describe('createGuardedLookup', () => {
  const resolverOf =
    (...addresses: string[]): Resolver =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

  function lookupAll(lookup: ReturnType<typeof createGuardedLookup>, host: string) {
    return new Promise<LookupAddress[]>((resolve, reject) => {
      lookup(host, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses as LookupAddress[])));
    });
  }

  it('hands the checked public addresses to the socket', async () => {
    const lookup = createGuardedLookup(true, resolverOf('93.184.216.34', '2606:4700:4700::1111'));
    await expect(lookupAll(lookup, 'example.test')).resolves.toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:4700:4700::1111', family: 6 },
    ]);
  });

  it('refuses a host when any of its addresses is private', async () => {
    const lookup = createGuardedLookup(true, resolverOf('93.184.216.34', '169.254.169.254'));
    const error = await lookupAll(lookup, 'rebind.test').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BlockedAddressError);
    expect(error).toMatchObject({ hostname: 'rebind.test', range: 'linkLocal' });
  });

  it('lets private addresses through when blocking is off', async () => {
    const lookup = createGuardedLookup(false, resolverOf('10.0.0.5'));
    await expect(lookupAll(lookup, 'internal.test')).resolves.toEqual([{ address: '10.0.0.5', family: 4 }]);
  });

  it('answers single-address lookups in the (address, family) form', async () => {
    const lookup = createGuardedLookup(true, resolverOf('2606:4700:4700::1111', '93.184.216.34'));
    const answer = await new Promise<[string, number | undefined]>((resolve, reject) => {
      lookup('example.test', { family: 4 }, (err, address, family) =>
        err ? reject(err) : resolve([address as string, family]),
      );
    });
    expect(answer).toEqual(['93.184.216.34', 4]);
  });

  it('passes resolver failures through unchanged', async () => {
    const failing: Resolver = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND x.invalid'), { code: 'ENOTFOUND' });
    };
    const error = await lookupAll(createGuardedLookup(true, failing), 'x.invalid').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ENOTFOUND' });
  });
});
