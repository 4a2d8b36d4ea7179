/**
 * The probing bench's saturation windows over NATS: the projections-stopped window runs right
 * after the first on the same service, so its jobs must not reuse the first window's ids (NATS
 * stores a re-published id once within its duplicate window, and the feeder counts every publish
 * as queued: that window once recorded nothing).
 */
import { jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { measureSaturation, provisionEndpoints, startService, startTargetProcess, type Service, type TargetProcess } from '../../../bench/probing.bench.js';
import { describeWithNats, startNatsServer, type TestNatsServer } from '../../support/nats-server.js';

jest.setTimeout(120_000);

describeWithNats('probing bench, saturation over NATS', () => {
  let nats: TestNatsServer | null = null;
  let target: TargetProcess;
  let service: Service;
  const dir = mkdtempSync(join(tmpdir(), 'bench-saturation-'));
  beforeAll(async () => {
    nats = await startNatsServer();
    target = await startTargetProcess();
    service = await startService(dir, nats!.url);
    await provisionEndpoints(service, target, { count: 20, intervalSeconds: 1 });
  });
  afterAll(async () => {
    await service?.close();
    await target?.close();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('records checks in the window right after another one', async () => {
    const timing = { warmupMs: 200, measureMs: 2500 };
    const first = await measureSaturation(service, timing, { drainViews: true });
    await service.platform.runner!.stop();
    const second = await measureSaturation(service, timing, { drainViews: false });
    expect(first.checks.length).toBeGreaterThan(0);
    expect(second.checks.length).toBeGreaterThan(0);
    const ids = [...first.checks, ...second.checks].map((check) => check.data.job_id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
