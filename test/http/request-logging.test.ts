import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { pino } from 'pino';
import { createHttpApp } from '../../src/app/http-app.js';
import { projections } from '../../src/app/contexts.js';
import { loadConfig } from '../../src/platform/config/config.js';
import { createPlatform, type Platform } from '../../src/platform/platform.js';
import { ADMIN_TOKEN } from '../support/test-app.js';

describe('request logging', () => {
  const lines: Array<Record<string, unknown>> = [];
  let dataDir: string;
  let platform: Platform;
  let app: NestFastifyApplication;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'request-logging-'));
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const config = loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN, LOG_LEVEL: 'debug' });
    platform = await createPlatform(config, { projections: projections(), withRunner: true, withTransport: true, logger });
    await platform.runner!.start();
    app = await createHttpApp(platform);
    await app.getHttpAdapter().getInstance().ready();
  });
  afterAll(async () => {
    await app.close();
    await platform.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('tags the lines Fastify logs for a request with its request id', async () => {
    const response = await app.inject({ method: 'GET', url: '/health/live', headers: { 'x-request-id': 'log-test-1' } });
    expect(response.statusCode).toBe(200);
    const tagged = lines.filter((line) => line.request_id === 'log-test-1').map((line) => line.msg);
    expect(tagged).toEqual(expect.arrayContaining(['incoming request', 'request completed']));
  });
});
