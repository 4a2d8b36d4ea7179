import { deepFreeze } from '../../../src/platform/deep-freeze.js';

describe('deepFreeze', () => {
  it('freezes every object and array a value holds, however deep, and leaves the values as they were', () => {
    const doc = {
      id: '1',
      state: { samples: [1, 2, 3], windows: [[true, false], [{ at: 'a' }]], signals: { latency: { state: 'ok', since: null } } },
      list: [{ a: 1 }, null, 'x', { b: [{ c: 2 }] }],
    };
    const copy = structuredClone(doc);
    expect(deepFreeze(doc)).toBe(doc);
    expect(doc).toEqual(copy);
    const frozen: unknown[] = [doc, doc.state, doc.state.samples, doc.state.windows, doc.state.windows[0], doc.state.windows[1], doc.state.windows[1][0], doc.state.signals.latency, doc.list, doc.list[0], doc.list[3], (doc.list[3] as { b: unknown[] }).b, ((doc.list[3] as { b: unknown[] }).b[0])];
    for (const value of frozen) expect(Object.isFrozen(value)).toBe(true);
    expect(() => {
      'use strict';
      (doc.state.samples as number[]).push(4);
    }).toThrow(TypeError);
  });

  it('passes primitives and null through', () => {
    expect(deepFreeze(null)).toBeNull();
    expect(deepFreeze(3)).toBe(3);
    expect(deepFreeze('x')).toBe('x');
  });
});
