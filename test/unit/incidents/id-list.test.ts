import type { LinkedCheck } from '../../../src/incidents/domain/events.js';
import { IdList, newestChecks } from '../../../src/incidents/domain/id-list.js';
import { at, failingCheck } from './fixtures.js';

const check = (id: number, minute = id): LinkedCheck => failingCheck(id, at(minute));
const ids = (linked: IdList<LinkedCheck>) => linked.toArray().map((c) => c.id);

describe('IdList: the comments, checkpoints and linked checks of an incident state', () => {
  it('links each check once, in the order linked', () => {
    const linked = IdList.empty<LinkedCheck>().with(check(1)).with(check(2)).with(check(1)).withAll([check(3), check(2)]);
    expect(ids(linked)).toEqual([1, 2, 3]);
    expect(linked.size).toBe(3);
    expect([linked.has(2), linked.has(4)]).toEqual([true, false]);
  });

  it('every state stays the value it was: an older state does not see checks linked after it', () => {
    const one = IdList.empty<LinkedCheck>().with(check(1));
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
    const linked = IdList.of([check(5, 50), check(1, 10), check(9, 90), check(7, 50), check(3, 30)]);
    expect(newestChecks(linked, 3).map((c) => c.id)).toEqual([5, 7, 9]);
    expect(newestChecks(linked, 10).map((c) => c.id)).toEqual([1, 3, 5, 7, 9]);
    expect(newestChecks(linked, 0)).toEqual([]);
  });

  it('replaces and removes by id without changing the states it came from', () => {
    const three = IdList.of([check(1), check(2), check(3)]);
    const edited = three.replaced({ ...check(2), status_code: 500 });
    expect(edited.toArray().map((c) => [c.id, c.status_code])).toEqual([[1, 503], [2, 500], [3, 503]]);
    expect(three.get(2)?.status_code).toBe(503);
    const removed = edited.without(2);
    expect(ids(removed)).toEqual([1, 3]);
    expect([removed.has(2), edited.has(2)]).toEqual([false, true]);
    expect(ids(removed.with(check(4)))).toEqual([1, 3, 4]);
    expect(three.replaced(check(9))).toBe(three);
  });

  it('serialises as the plain list of checks', () => {
    expect(JSON.parse(JSON.stringify({ checks: IdList.of([check(1), check(2)]) })).checks.map((c: LinkedCheck) => c.id)).toEqual([1, 2]);
  });
});
