import { bucketRange, parseAnalyticsWindow, type WindowResult } from '../../../src/analytics/domain/window.js';

const NOW = Date.parse('2026-03-10T12:34:56.789Z');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function ok(result: WindowResult) {
  if (!result.ok) throw new Error(`expected a window, got ${JSON.stringify(result.errors)}`);
  return result.window;
}

function errorsOf(result: WindowResult) {
  if (result.ok) throw new Error('expected validation errors');
  return result.errors.map((e) => `${e.field}:${e.code}`).sort();
}

describe('analytics window defaults', () => {
  it('is the last 24 hours up to now, in 48 buckets of 30 minutes', () => {
    const window = ok(parseAnalyticsWindow({}, NOW));
    expect(window).toEqual({ from: NOW - DAY, to: NOW, bucket_seconds: 1800, buckets: 48 });
  });

  it.each([
    ['1h', HOUR],
    ['6h', 6 * HOUR],
    ['24h', DAY],
    ['7d', 7 * DAY],
    ['30d', 30 * DAY],
    ['90d', 90 * DAY],
  ])('window=%s ends now and spans its length', (name, length) => {
    const window = ok(parseAnalyticsWindow({ window: name }, NOW));
    expect(window.to).toBe(NOW);
    expect(window.to - window.from).toBe(length);
  });
});

describe('analytics window from/to', () => {
  it('replaces window, accepts any offset and keeps milliseconds', () => {
    const window = ok(
      parseAnalyticsWindow({ window: '90d', from: '2026-03-01T02:00:00.250+02:00', to: '2026-03-01T01:00:00.250Z' }, NOW),
    );
    expect(window.from).toBe(Date.parse('2026-03-01T00:00:00.250Z'));
    expect(window.to).toBe(Date.parse('2026-03-01T01:00:00.250Z'));
  });

  it('rounds bucket_seconds up so the buckets cover the whole range', () => {
    const window = ok(parseAnalyticsWindow({ from: '2026-03-01T00:00:00Z', to: '2026-03-01T00:00:10.001Z', buckets: '5' }, NOW));
    expect(window.bucket_seconds).toBe(3);
  });

  it('makes the last buckets empty ranges when seconds run out before buckets do', () => {
    const window = ok(parseAnalyticsWindow({ from: '2026-03-01T00:00:00Z', to: '2026-03-01T00:00:03Z', buckets: '10' }, NOW));
    expect(window.bucket_seconds).toBe(1);
    const last = bucketRange(window, 9);
    expect(last.start).toBeGreaterThanOrEqual(last.end);
    expect(bucketRange(window, 2)).toEqual({ start: window.from + 2000, end: window.to });
  });

  it('accepts exactly 90 days and 200 buckets', () => {
    const window = ok(parseAnalyticsWindow({ from: '2026-01-01T00:00:00Z', to: '2026-04-01T00:00:00Z', buckets: '200' }, NOW));
    expect(window.buckets).toBe(200);
    expect(window.bucket_seconds).toBe(38_880);
  });
});

describe('analytics window validation reports every violation', () => {
  it.each([
    [{ window: '2h' }, ['window:invalid_value']],
    [{ window: '' }, ['window:invalid_value']],
    [{ window: 'constructor' }, ['window:invalid_value']],
    [{ from: '2026-03-01T00:00:00Z' }, ['to:required']],
    [{ to: '2026-03-01T00:00:00Z' }, ['from:required']],
    [{ from: '2026-03-01', to: '2026-03-02T00:00:00Z' }, ['from:invalid_value']],
    [{ from: '2026-02-30T00:00:00Z', to: '2026-03-02T00:00:00Z' }, ['from:invalid_value']],
    [{ from: '2026-03-01T00:00:00', to: '2026-03-02T00:00:00Z' }, ['from:invalid_value']],
    [{ from: '2026-03-01T24:00:00Z', to: '2026-03-02T00:00:00Z' }, ['from:invalid_value']],
    [{ from: '2026-03-01T00:00:00Z', to: 'Mon, 02 Mar 2026 00:00:00 GMT' }, ['to:invalid_value']],
    [{ from: '2026-03-02T00:00:00Z', to: '2026-03-02T00:00:00Z' }, ['from:conflict']],
    [{ from: '2026-03-02T00:00:00Z', to: '2026-03-01T00:00:00Z' }, ['from:conflict']],
    [{ from: '2026-01-01T00:00:00Z', to: '2026-04-01T00:00:00.001Z' }, ['to:out_of_range']],
    [{ buckets: '0' }, ['buckets:out_of_range']],
    [{ buckets: '201' }, ['buckets:out_of_range']],
    [{ buckets: '-1' }, ['buckets:invalid_type']],
    [{ buckets: '+5' }, ['buckets:invalid_type']],
    [{ buckets: '4.0' }, ['buckets:invalid_type']],
    [{ buckets: '0x10' }, ['buckets:invalid_type']],
    [{ buckets: ' 5' }, ['buckets:invalid_type']],
    [{ buckets: '' }, ['buckets:invalid_type']],
    [{ buckets: ['4', '5'] }, ['buckets:invalid_value']],
  ])('%j -> %j', (query, expected) => {
    expect(errorsOf(parseAnalyticsWindow(query, NOW))).toEqual(expected);
  });

  it('lists all broken rules of one request together', () => {
    const result = parseAnalyticsWindow({ window: '1y', from: 'yesterday', buckets: '500' }, NOW);
    expect(errorsOf(result)).toEqual(['buckets:out_of_range', 'from:invalid_value', 'to:required', 'window:invalid_value']);
  });

  it('hints at encoding when a + offset arrived as a space', () => {
    const result = parseAnalyticsWindow({ from: '2026-03-01T00:00:00 02:00', to: '2026-03-02T00:00:00Z' }, NOW);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors[0].message).toContain('%2B');
  });
});
