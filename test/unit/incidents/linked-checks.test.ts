import type { LinkedCheck } from '../../../src/incidents/domain/events.js';
import { LinkedChecks } from '../../../src/incidents/domain/linked-checks.js';
import { at, failingCheck } from './fixtures.js';

const check = (id: number, minute = id): LinkedCheck => failingCheck(id, at(minute));
const ids = (linked: LinkedChecks) => linked.toArray().map((c) => c.id);

describe('LinkedChecks: the linked checks of an incident state', () => {
  it('links each check once, in the order linked', () => {
    const linked = LinkedChecks.empty().with(check(1)).with(check(2)).with(check(1)).withAll([check(3), check(2)]);
    expect(ids(linked)).toEqual([1, 2, 3]);
    expect(linked.size).toBe(3);
    expect([linked.has(2), linked.has(4)]).toEqual([true, false]);
  });

  it('every state stays the value it was: an older state does not see checks linked after it', () => {
    const one = LinkedChecks.empty().with(check(1));
    const two = one.with(check(2));
    const otherBranch = one.with(check(3));
    expect(ids(one)).toEqual([1]);
    expect(one.has(2)).toBe(false);
    expect(ids(two)).toEqual([1, 2]);
    expect(ids(otherBranch)).toEqual([1, 3]);
    expect(otherBranch.has(2)).toBe(false);
    // Folding the same event twice from one state (after an append, then when read back) agrees.
    expect(ids(one.with(check(2)))).toEqual([1, 2]);
    expect(ids(two.with(check(4)))).toEqual([1, 2, 4]);
  });

  it('newest(n) picks the n latest by checked_at (ties by id), oldest first, whatever the link order', () => {
    const linked = LinkedChecks.of([check(5, 50), check(1, 10), check(9, 90), check(7, 50), check(3, 30)]);
    expect(linked.newest(3).map((c) => c.id)).toEqual([5, 7, 9]);
    expect(linked.newest(10).map((c) => c.id)).toEqual([1, 3, 5, 7, 9]);
    expect(linked.newest(0)).toEqual([]);
  });

  it('serialises as the plain list of checks', () => {
    expect(JSON.parse(JSON.stringify({ checks: LinkedChecks.of([check(1), check(2)]) })).checks.map((c: LinkedCheck) => c.id)).toEqual([1, 2]);
  });
});
