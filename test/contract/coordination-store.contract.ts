/**
 * The coordination-store contract: every adapter must pass it. `make` prepares fresh, empty
 * storage and returns a backend whose `open()` gives another store instance over that same
 * storage (what a second process would see; all of them on one data dir, so one opened after
 * another was closed is what a process restarted in its place would see). The suite closes what it opens; the caller removes
 * the storage afterwards.
 */
import { jest } from '@jest/globals';
import type { CoordinationStore, LeaseOptions, StoredResponse } from '../../src/platform/coordination/coordination.port.js';
import { newProcessIdentity } from '../../src/platform/coordination/process-identity.js';

export interface CoordinationBackend {
  /** `options.clock` is the new instance's monotonic clock (what its process would read). */
  open(options?: LeaseOptions): Promise<CoordinationStore>;
}

/** A monotonic clock the test moves by hand. */
function manualClock(): (() => number) & { advance(ms: number): void } {
  let now = 1_000;
  return Object.assign(() => now, { advance: (ms: number) => void (now += ms) });
}

const T0 = 1_700_000_000_000;
const CLAIM = { retentionMs: 86_400_000, staleAfterMs: 60_000 };

export function coordinationStoreContract(name: string, make: () => Promise<CoordinationBackend>): void {
  describe(`coordination store contract: ${name}`, () => {
    let opened: CoordinationStore[];
    let a: CoordinationStore;
    let b: CoordinationStore;
    let clockA: ReturnType<typeof manualClock>;
    let clockB: ReturnType<typeof manualClock>;

    beforeEach(async () => {
      opened = [];
      clockA = manualClock();
      clockB = manualClock();
      const backend = await make();
      a = await backend.open({ clock: clockA });
      b = await backend.open({ clock: clockB });
      opened.push(a, b);
    });

    afterEach(async () => {
      await Promise.all(opened.map((s) => s.close()));
    });

    describe('leases', () => {
      it('grants a free lease with epoch 1 and refuses it to another owner for as long as the holder renews', async () => {
        expect(await a.acquireLease('projector', 'p1', 10_000)).toEqual({ name: 'projector', owner: 'p1', epoch: 1, validUntil: clockA() + 10_000, acquired: true });
        expect(await b.acquireLease('projector', 'p2', 10_000)).toBeNull();
        for (let i = 0; i < 5; i++) {
          // The taker's clock passes the period many times over, but it sees every renewal.
          clockA.advance(6_000);
          clockB.advance(60_000);
          expect(await a.acquireLease('projector', 'p1', 10_000)).toEqual({ name: 'projector', owner: 'p1', epoch: 1, validUntil: clockA() + 10_000, acquired: false });
          expect(await b.acquireLease('projector', 'p2', 10_000)).toBeNull();
        }
      });

      it('keeps a live lease from a taker whose wall clock is two minutes ahead', async () => {
        const realNow = Date.now.bind(Date);
        await a.acquireLease('skewed', 'p1', 10_000);
        const ahead = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + 120_000);
        try {
          expect(await b.acquireLease('skewed', 'p2', 10_000)).toBeNull();
          clockB.advance(9_999);
          expect(await b.acquireLease('skewed', 'p2', 10_000)).toBeNull();
          expect(await b.acquireLeases(['skewed'], 'p2', 10_000)).toEqual([]);
        } finally {
          ahead.mockRestore();
        }
        expect(await a.acquireLease('skewed', 'p1', 10_000)).toMatchObject({ owner: 'p1', epoch: 1, acquired: false });
      });

      it('takes over a lease whose holder stopped renewing once the period has passed on the taker\'s own clock since it last saw a change, with a higher epoch', async () => {
        await a.acquireLease('orphan', 'p1', 10_000);
        expect(await b.acquireLease('orphan', 'p2', 10_000)).toBeNull(); // first seen now
        clockB.advance(6_000);
        await a.acquireLease('orphan', 'p1', 10_000); // a last renewal, then p1 stops
        clockB.advance(6_000);
        expect(await b.acquireLease('orphan', 'p2', 10_000)).toBeNull(); // the change is seen now
        clockB.advance(9_999);
        expect(await b.acquireLease('orphan', 'p2', 10_000)).toBeNull();
        clockB.advance(1);
        expect(await b.acquireLease('orphan', 'p2', 10_000)).toEqual({ name: 'orphan', owner: 'p2', epoch: 2, validUntil: clockB() + 10_000, acquired: true });
        // The old holder comes back: refused, and it never takes the lease back while p2 renews.
        expect(await a.acquireLease('orphan', 'p1', 10_000)).toBeNull();
        clockA.advance(60_000);
        await b.acquireLease('orphan', 'p2', 10_000);
        expect(await a.acquireLease('orphan', 'p1', 10_000)).toBeNull();
      });

      it('frees the lease only when its owner releases it, and the next grant has a higher epoch', async () => {
        await a.acquireLease('shard-2', 'p1', 10_000);
        await b.releaseLease('shard-2', 'p2');
        expect(await b.acquireLease('shard-2', 'p2', 10_000)).toBeNull();
        await a.releaseLease('shard-2', 'p1');
        expect(await b.acquireLease('shard-2', 'p2', 10_000)).toMatchObject({ owner: 'p2', epoch: 2, acquired: true });
        await b.releaseLease('shard-2', 'p2');
        expect(await a.acquireLease('shard-2', 'p1', 10_000)).toMatchObject({ owner: 'p1', epoch: 3, acquired: true });
      });

      it('lists the leases held, with owners and epochs, leaving out free ones', async () => {
        await a.acquireLease('listed-1', 'p1', 10_000);
        await b.acquireLease('listed-2', 'p2', 5_000);
        await b.acquireLease('listed-3', 'p2', 5_000);
        await b.releaseLease('listed-3', 'p2');
        await a.acquireLease('listed-1', 'p1', 10_000);
        const listed = (await a.listLeases()).filter((lease) => lease.name.startsWith('listed-'));
        expect(listed).toEqual([
          { name: 'listed-1', owner: 'p1', epoch: 1, renewals: 1, ttlMs: 10_000, renewedAt: expect.any(Number) },
          { name: 'listed-2', owner: 'p2', epoch: 1, renewals: 0, ttlMs: 5_000, renewedAt: expect.any(Number) },
        ]);
      });

      it('removes the free leases of a prefix and those not renewed since a time, and no other', async () => {
        await a.acquireLease('announce:live', 'p1', 10_000);
        await b.acquireLease('announce:stopped', 'p2', 10_000);
        await b.releaseLease('announce:stopped', 'p2');
        await b.acquireLease('announced', 'p2', 10_000); // another prefix: "announce:" is literal
        await b.releaseLease('announced', 'p2');
        await b.acquireLease('shard-9', 'p2', 10_000);
        await b.releaseLease('shard-9', 'p2');
        expect(await a.removeLeases('announce:', Date.now() - 60_000)).toBe(1);
        expect((await a.listLeases()).map((lease) => lease.name).filter((name) => name.startsWith('announce'))).toEqual(['announce:live']);
        // Free rows of other names keep their epoch.
        expect(await a.acquireLease('announced', 'p1', 10_000)).toMatchObject({ epoch: 2 });
        expect(await a.acquireLease('shard-9', 'p1', 10_000)).toMatchObject({ epoch: 2 });
        // A holder that stopped renewing long ago goes too; one still running puts it back at its next renewal.
        expect(await b.removeLeases('announce:', Date.now() + 60_000)).toBe(1);
        expect((await b.listLeases()).map((lease) => lease.name).filter((name) => name.startsWith('announce:'))).toEqual([]);
        expect(await a.acquireLease('announce:live', 'p1', 10_000)).toMatchObject({ owner: 'p1', epoch: 1, acquired: true });
        expect(await a.removeLeases('announce:', Date.now() - 60_000)).toBe(0);
      });

      it('grants a contested lease to exactly one of many owners', async () => {
        const grants = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).acquireLease('contested', `owner-${i}`, 10_000)));
        expect(grants.filter((g) => g !== null)).toHaveLength(1);
      });

      it('acquires and renews several leases at once, leaving out those another owner holds until it stops renewing', async () => {
        await b.acquireLease('many-2', 'p2', 10_000);
        const first = await a.acquireLeases(['many-1', 'many-2', 'many-3'], 'p1', 10_000);
        expect(first.map((g) => g.name).sort()).toEqual(['many-1', 'many-3']);
        expect(first.every((g) => g.owner === 'p1' && g.epoch === 1 && g.acquired)).toBe(true);
        clockA.advance(10_000);
        // many-2 has not changed for a whole period of a's observation: this renewal takes it too
        const renewed = await a.acquireLeases(['many-1', 'many-2', 'many-3'], 'p1', 10_000);
        expect(renewed.map((g) => [g.name, g.epoch, g.acquired]).sort()).toEqual([
          ['many-1', 1, false],
          ['many-2', 2, true],
          ['many-3', 1, false],
        ]);
        expect(await b.acquireLease('many-1', 'p2', 10_000)).toBeNull();
        expect(await a.acquireLeases([], 'p1', 10_000)).toEqual([]);
      });

      it('claims notification channels (delivery lanes): each to one of two processes at a time, and a released claim leaves nothing behind', async () => {
        const ids = Array.from({ length: 20 }, (_, i) => `notification-channel:${i}`);
        const grants = await Promise.all(ids.flatMap((id) => [a.acquireLease(id, 'worker-a', 25_000), b.acquireLease(id, 'worker-b', 25_000)]));
        for (let i = 0; i < ids.length; i++) expect([grants[2 * i], grants[2 * i + 1]].filter((g) => g !== null)).toHaveLength(1);
        for (let i = 0; i < ids.length; i++) await (grants[2 * i] ? a.releaseLease(ids[i], 'worker-a') : b.releaseLease(ids[i], 'worker-b'));
        expect((await a.listLeases()).filter((lease) => lease.name.startsWith('notification-channel:'))).toEqual([]);
        expect(await b.acquireLease(ids[0], 'worker-b', 25_000)).toMatchObject({ epoch: 2, acquired: true });
      });
    });

    describe('rate counters', () => {
      const MINUTE = 60_000;

      it('counts hits from two instances in one fixed window and resets in the next', async () => {
        const start = T0 - (T0 % MINUTE);
        const counts: number[] = [];
        for (let i = 0; i < 6; i++) counts.push((await (i % 2 ? a : b).hit('token-1', MINUTE, start + i * 1000)).count);
        expect(counts).toEqual([1, 2, 3, 4, 5, 6]);
        expect(await a.hit('token-1', MINUTE, start + MINUTE - 1)).toEqual({ count: 7, resetAt: start + MINUTE });
        expect(await b.hit('token-1', MINUTE, start + MINUTE)).toEqual({ count: 1, resetAt: start + 2 * MINUTE });
      });

      it('keeps separate counts per key', async () => {
        await a.hit('token-a', MINUTE, T0);
        await a.hit('token-a', MINUTE, T0);
        expect((await b.hit('token-b', MINUTE, T0)).count).toBe(1);
      });

      it('counts every concurrent hit exactly once', async () => {
        const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).hit('burst', MINUTE, T0)));
        expect(results.map((r) => r.count).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      });
    });

    describe('rate quotas', () => {
      const MINUTE = 60_000;

      it('grants what is asked until the limit, then only the rest, then nothing, and resets in the next window', async () => {
        const start = T0 - (T0 % MINUTE);
        expect(await a.takeQuota('quota-1', MINUTE, 4, 10, start)).toEqual({ granted: 4, count: 4, resetAt: start + MINUTE });
        expect(await b.takeQuota('quota-1', MINUTE, 4, 10, start + 1)).toEqual({ granted: 4, count: 8, resetAt: start + MINUTE });
        expect(await a.takeQuota('quota-1', MINUTE, 4, 10, start + 2)).toEqual({ granted: 2, count: 10, resetAt: start + MINUTE });
        expect(await b.takeQuota('quota-1', MINUTE, 1, 10, start + MINUTE - 1)).toEqual({ granted: 0, count: 10, resetAt: start + MINUTE });
        expect(await b.takeQuota('quota-1', MINUTE, 3, 10, start + MINUTE)).toEqual({ granted: 3, count: 3, resetAt: start + 2 * MINUTE });
      });

      it('never grants more than the limit to concurrent takers', async () => {
        const grants = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).takeQuota('quota-race', MINUTE, 3, 25, T0)));
        expect(grants.reduce((sum, g) => sum + g.granted, 0)).toBe(25);
        expect(Math.max(...grants.map((g) => g.count))).toBe(25);
      });
    });

    describe('idempotency claims', () => {
      const response: StoredResponse = {
        status: 201,
        body: { id: 'inc_1', nested: { 'dotted.key': [1, null, 'x'], $sign: true } },
        headers: { location: '/v2/incidents/inc_1' },
      };

      it('lets exactly one of 20 concurrent claims of a key through', async () => {
        const claims = await Promise.all(
          Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).claimIdempotency('k-race', 'fp', { ...CLAIM, now: T0 })),
        );
        const outcomes = claims.map((c) => c.outcome);
        expect(outcomes.filter((o) => o === 'claimed')).toHaveLength(1);
        expect(outcomes.filter((o) => o === 'in_progress')).toHaveLength(19);
      });

      it('replays the stored response once completed, to any instance', async () => {
        expect(await a.claimIdempotency('k1', 'fp', { ...CLAIM, now: T0 })).toEqual({ outcome: 'claimed' });
        await a.completeIdempotency('k1', response);
        expect(await b.claimIdempotency('k1', 'fp', { ...CLAIM, now: T0 + 5_000 })).toEqual({ outcome: 'completed', response });
        expect(await a.claimIdempotency('k1', 'fp', { ...CLAIM, now: T0 + 6_000 })).toEqual({ outcome: 'completed', response });
      });

      it('reports a fingerprint mismatch while running and after completion', async () => {
        await a.claimIdempotency('k2', 'fp-1', { ...CLAIM, now: T0 });
        expect(await b.claimIdempotency('k2', 'fp-2', { ...CLAIM, now: T0 + 1 })).toEqual({ outcome: 'fingerprint_mismatch' });
        await a.completeIdempotency('k2', response);
        expect(await b.claimIdempotency('k2', 'fp-2', { ...CLAIM, now: T0 + 2 })).toEqual({ outcome: 'fingerprint_mismatch' });
      });

      it('treats a record older than the retention as absent', async () => {
        await a.claimIdempotency('k3', 'fp-1', { ...CLAIM, now: T0 });
        await a.completeIdempotency('k3', response);
        const later = T0 + CLAIM.retentionMs;
        expect(await b.claimIdempotency('k3', 'fp-1', { ...CLAIM, now: later - 1 })).toEqual({ outcome: 'completed', response });
        expect(await b.claimIdempotency('k3', 'fp-2', { ...CLAIM, now: later })).toEqual({ outcome: 'claimed' });
        expect(await a.claimIdempotency('k3', 'fp-2', { ...CLAIM, now: later + 1 })).toEqual({ outcome: 'in_progress' });
      });

      it('lets a stale in-progress claim be taken over, once', async () => {
        await a.claimIdempotency('k4', 'fp', { ...CLAIM, now: T0 });
        const stale = T0 + CLAIM.staleAfterMs;
        expect(await b.claimIdempotency('k4', 'fp', { ...CLAIM, now: stale - 1 })).toEqual({ outcome: 'in_progress' });
        expect(await b.claimIdempotency('k4', 'fp', { ...CLAIM, now: stale })).toEqual({ outcome: 'claimed' });
        expect(await a.claimIdempotency('k4', 'fp', { ...CLAIM, now: stale + 1 })).toEqual({ outcome: 'in_progress' });
      });

      it('forgets a released claim so the client may retry, but never a completed one', async () => {
        await a.claimIdempotency('k5', 'fp', { ...CLAIM, now: T0 });
        await a.releaseIdempotency('k5');
        expect(await b.claimIdempotency('k5', 'fp', { ...CLAIM, now: T0 + 1 })).toEqual({ outcome: 'claimed' });
        await b.completeIdempotency('k5', { status: 200, body: null });
        await b.releaseIdempotency('k5');
        expect(await a.claimIdempotency('k5', 'fp', { ...CLAIM, now: T0 + 2 })).toEqual({
          outcome: 'completed',
          response: { status: 200, body: null },
        });
      });

      it('lets the process restarted after a crash take its predecessor\'s unfinished claims at once, never a live process\'s', async () => {
        const backend = await make();
        const crashed = await backend.open();
        const live = await backend.open();
        opened.push(live);
        const [gone, liveId] = [newProcessIdentity('web', 1), newProcessIdentity('web', 1)];
        expect(await crashed.claimIdempotency('k-crashed', 'fp', { ...CLAIM, owner: gone })).toEqual({ outcome: 'claimed' });
        expect(await live.claimIdempotency('k-live', 'fp', { ...CLAIM, owner: liveId })).toEqual({ outcome: 'claimed' });
        expect(await live.claimIdempotency('k-crashed', 'fp', { ...CLAIM, owner: liveId })).toEqual({ outcome: 'in_progress' });

        await crashed.close(); // as a SIGKILL would: the claims stay, the process's locks go

        // Well within the stale period: only the proof that the claim's process is gone lets it through.
        const restarted = await backend.open();
        opened.push(restarted);
        const restartedId = newProcessIdentity('web', 1);
        expect(await restarted.claimIdempotency('k-crashed', 'fp', { ...CLAIM, owner: restartedId })).toEqual({ outcome: 'claimed' });
        expect(await restarted.claimIdempotency('k-live', 'fp', { ...CLAIM, owner: restartedId })).toEqual({ outcome: 'in_progress' });
        expect(await live.claimIdempotency('k-crashed', 'fp', { ...CLAIM, owner: liveId })).toEqual({ outcome: 'in_progress' });
      });
    });

    it('answers ping', async () => {
      await expect(a.ping()).resolves.toBeUndefined();
    });
  });
}
