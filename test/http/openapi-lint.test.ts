/**
 * Both served OpenAPI documents, written to a temp file and linted with `redocly lint` under its
 * recommended rules (the default when no configuration is given): no error and no warning.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runNode } from '../support/child-process.js';
import { makeTempDir } from '../support/event-store-fixtures.js';
import { startedBeforeAll } from '../support/started-before-all.js';
import { startTestApp } from '../support/test-app.js';

const REDOCLY = join(process.cwd(), 'node_modules/@redocly/cli/bin/cli.js');

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: Array<{ ruleId: string; message: string; location: Array<{ pointer: string }> }>;
}

async function lint(file: string): Promise<LintReport> {
  const result = await runNode(REDOCLY, ['lint', '--format=json', file], { env: { REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } });
  try {
    return JSON.parse(result.stdout) as LintReport;
  } catch {
    throw new Error(`redocly lint gave no report (exit ${result.code}): ${result.stderr}`);
  }
}

describe('the OpenAPI documents pass redocly lint (recommended rules)', () => {
  const t = startedBeforeAll(() => startTestApp(), (app) => app.close());
  const dir = makeTempDir('openapi-lint-');
  afterAll(() => dir.remove());

  it.each([
    ['developer API', '/api/public/v2/openapi.json'],
    ['application API', '/api/v2/openapi.json'],
  ])('%s (%s)', async (_name, url) => {
    const response = await t.request('GET', url);
    expect(response.statusCode).toBe(200);
    const document = response.json();
    expect(document.openapi).toBe('3.1.0');
    const file = join(dir.path, url.replace(/\W+/g, '_'));
    writeFileSync(file, JSON.stringify(document));
    const report = await lint(file);
    expect(report.problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 60_000);
});
