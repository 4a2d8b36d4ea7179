import { computeBaseline, median } from '../../../src/alerting/domain/baseline.js';

const AT = '2026-11-21T15:04:05.123Z';
/** The statistical part alone: materiality floors off (their own tests below set them). */
const options = (latency_min_samples: number, latency_sensitivity = 3) => ({
  latency_min_samples,
  latency_sensitivity,
  latency_min_increase_ms: 0,
  latency_min_increase_percent: 0,
});
const repeat = (value: number, times: number) => Array.from({ length: times }, () => value);

describe('latency baseline', () => {
  it('is median + sensitivity x 1.4826 x MAD, rounded to a whole ms', () => {
    // sorted 60 80 90 100 110 120 140: median 100; deviations 0 10 10 20 20 40 40: MAD 20.
    // 100 + 3 x 1.4826 x 20 = 188.956
    expect(computeBaseline([100, 120, 80, 140, 60, 110, 90], options(7), AT)).toEqual({
      samples: 7,
      median_ms: 100,
      mad_ms: 20,
      threshold_ms: 189,
      computed_at: AT,
      min_increase_ms: 0,
      min_increase_percent: 0,
    });
  });

  it('takes the mean of the two middle values for an even count', () => {
    // median 25; deviations 15 5 5 15: MAD 10; 25 + 2 x 14.826 = 54.652
    expect(computeBaseline([10, 20, 30, 40], options(4, 2), AT)).toMatchObject({ median_ms: 25, mad_ms: 10, threshold_ms: 55 });
    expect(median([3, 1, 2, 4])).toBe(2.5);
    // Ordered as numbers, not as text (which would put 100 before 11 and 2).
    expect(median([100, 2, 11, 10])).toBe(10.5);
  });

  it('floors the spread at 5% of the median so a perfectly stable endpoint tolerates small jitter', () => {
    // MAD 0: spread 5 ms, threshold 100 + 3 x 5
    expect(computeBaseline(repeat(100, 20), options(20), AT)).toMatchObject({ median_ms: 100, mad_ms: 0, threshold_ms: 115 });
  });

  it('floors the spread at 1 ms for very fast endpoints', () => {
    expect(computeBaseline(repeat(10, 20), options(20), AT)).toMatchObject({ mad_ms: 0, threshold_ms: 13 });
  });

  it('is null until min_samples samples exist', () => {
    expect(computeBaseline(repeat(100, 19), options(20), AT)).toBeNull();
    expect(computeBaseline(repeat(100, 20), options(20), AT)).not.toBeNull();
    expect(computeBaseline([], options(0), AT)).toBeNull();
  });

  it('uses only the last 100 samples so an old normal is forgotten', () => {
    const latencies = [...repeat(1000, 50), ...repeat(100, 100)];
    expect(computeBaseline(latencies, options(20), AT)).toMatchObject({ samples: 100, median_ms: 100, threshold_ms: 115 });
  });

  it('widens the window to min_samples when that is above 100', () => {
    const latencies = [...repeat(1000, 50), ...repeat(100, 150)];
    expect(computeBaseline(latencies, options(200), AT)).toMatchObject({ samples: 200, median_ms: 100 });
    expect(computeBaseline(latencies.slice(1), options(200), AT)).toBeNull();
  });
  describe('materiality floors', () => {
    it('keep a fast endpoint\'s threshold above scheduling jitter (defaults 25 ms and 25 %)', () => {
      // 2 ms median, MAD 0: statistically 2 + 3 x 1 = 5 ms, materially 2 + 25 = 27 ms.
      const baseline = computeBaseline(repeat(2, 20), { latency_min_samples: 20, latency_sensitivity: 3 }, AT);
      expect(baseline).toMatchObject({ median_ms: 2, threshold_ms: 27, min_increase_ms: 25, min_increase_percent: 25 });
    });

    it('take the larger of the absolute and relative floor, and never lower a statistical threshold', () => {
      const settings = (ms: number, percent: number) => ({ latency_min_samples: 20, latency_sensitivity: 3, latency_min_increase_ms: ms, latency_min_increase_percent: percent });
      expect(computeBaseline(repeat(400, 20), settings(25, 25), AT)?.threshold_ms).toBe(500);
      expect(computeBaseline(repeat(400, 20), settings(150, 25), AT)?.threshold_ms).toBe(550);
      expect(computeBaseline([100, 120, 80, 140, 60, 110, 90], { ...settings(10, 10), latency_min_samples: 7 }, AT)?.threshold_ms).toBe(189);
    });
  });
});
