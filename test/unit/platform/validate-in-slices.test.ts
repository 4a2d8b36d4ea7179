import 'reflect-metadata';
import { ImportChecksBody } from '../../../src/monitoring/http/admin.dto.js';
import { ProblemError } from '../../../src/platform/http/problem.js';
import { validateBody, validateBodyInSlices } from '../../../src/platform/http/validation.js';

const check = (n: number, extra: Record<string, unknown> = {}) => ({ checked_at: new Date(Date.UTC(2026, 0, 1) + n * 60_000).toISOString(), success: true, status_code: 200, latency_ms: 100, ...extra });

async function problemOf(work: () => unknown): Promise<any> {
  try {
    await work();
  } catch (error) {
    if (error instanceof ProblemError) return error.problem;
    throw error;
  }
  return null;
}

describe('validateBodyInSlices (check import, issue 19 item 4)', () => {
  it('lets other work run while it validates 10,000 checks', async () => {
    const checks = Array.from({ length: 10_000 }, (_, n) => check(n));
    let turns = 0;
    let validating = true;
    const other = (async () => {
      while (validating) {
        await new Promise((resolve) => setImmediate(resolve));
        turns++;
      }
    })();
    const input = await validateBodyInSlices(ImportChecksBody, { checks });
    validating = false;
    await other;
    expect(input.checks).toHaveLength(10_000);
    expect(input.checks[9_999].checked_at).toBe(checks[9_999].checked_at);
    // One turn per slice at least: the event loop was not held for the whole body.
    expect(turns).toBeGreaterThanOrEqual(10_000 / 250 - 1);
  });

  it.each([
    ['valid', { checks: [check(1), check(2)] }],
    ['a bad item and an unknown field', { checks: [check(1), check(2, { success: 'yes', colour: 1 }), check(3, { checked_at: '2026-02-30T00:00:00Z' })], extra: 1 }],
    ['an empty array', { checks: [] }],
    ['items that are not objects', { checks: [1, [check(1)]] }],
    ['too many', { checks: Array.from({ length: 10_001 }, (_, n) => check(n)) }],
    ['no checks', {}],
    ['not an object', [1]],
  ])('answers like validateBody: %s', async (_name, body) => {
    const sync = await problemOf(() => validateBody(ImportChecksBody, body));
    const sliced = await problemOf(() => validateBodyInSlices(ImportChecksBody, body));
    const codes = (problem: any) => problem && { status: problem.status, errors: problem.errors?.map((e: any) => `${e.field}:${e.code}`).sort() };
    expect(codes(sliced)).toEqual(codes(sync));
  });

  it('lists at most 50 errors of 10,000 bad items and counts the rest exactly', async () => {
    const checks = Array.from({ length: 10_000 }, (_, n) => check(n, { status_code: 900 }));
    const problem = await problemOf(() => validateBodyInSlices(ImportChecksBody, { checks }));
    expect(problem.errors).toHaveLength(50);
    expect(problem.errorsOmitted).toBe(10_000 - 50);
  });
});
