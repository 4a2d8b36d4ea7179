import { jest } from '@jest/globals';
import { isoNow } from '../../../src/platform/time/iso-now.js';

describe('isoNow', () => {
  const T0 = Date.parse('2026-11-27T13:00:00.000Z');
  beforeEach(() => jest.useFakeTimers({ now: T0 }));
  afterEach(() => jest.useRealTimers());

  it("is new Date().toISOString() of the clock's millisecond, whichever way the clock moves", () => {
    expect(isoNow()).toBe(new Date().toISOString());
    expect(isoNow()).toBe('2026-11-27T13:00:00.000Z');
    jest.setSystemTime(T0 + 1);
    expect(isoNow()).toBe('2026-11-27T13:00:00.001Z');
    jest.setSystemTime(T0 - 60_000);
    expect(isoNow()).toBe('2026-11-27T12:59:00.000Z');
    expect(isoNow()).toBe(new Date().toISOString());
  });
});
