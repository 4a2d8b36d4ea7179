/**
 * An idle service (ROLE=all, no endpoint) must write next to nothing: it used to write 6.2 MB a
 * minute (one SQLite transaction per lease per second, ~25 leases) and let the coordination WAL
 * grow without bound. The built service runs as a child process; its writes come from
 * /proc/<pid>/io over a window long enough for several lease renewals (every 5 s).
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '../support/event-store-fixtures.js';
import { ensureBuilt, processIo, startBuiltService, type BuiltService } from '../support/built-service.js';

const AIM_BYTES_PER_MINUTE = 512 * 1024;
const WINDOW_MS = 20_000;
/** Start-up writes (view collections, first lease grants) are not idle writes. */
const SETTLE_MS = 3_000;
const WAL_BOUND_BYTES = 1024 * 1024;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function walSizes(dir: string): Record<string, number> {
  return Object.fromEntries(readdirSync(dir).filter((f) => f.endsWith('-wal')).map((f) => [f, statSync(join(dir, f)).size]));
}

const procIo = (() => {
  try {
    processIo(process.pid);
    return true;
  } catch {
    return false;
  }
})();

(procIo ? describe : describe.skip)('an idle service (skipped where /proc/<pid>/io is unavailable)', () => {
  const dir = makeTempDir('idle-writes-');
  let service: BuiltService;

  beforeAll(async () => {
    ensureBuilt();
    service = await startBuiltService({ DATA_DIR: join(dir.path, 'data'), ROLE: 'all', ADMIN_TOKEN: 'idle-test-admin-token-0123456789' });
    await service.ready(); // its processors started: what follows is idle
  }, 120_000);

  afterAll(async () => {
    await service?.stop();
    dir.remove();
  });

  it('writes under 512 KB a minute and keeps every WAL file under 1 MB', async () => {
    await pause(SETTLE_MS);
    const before = processIo(service.pid);
    const started = Date.now();
    await pause(WINDOW_MS);
    const after = processIo(service.pid);
    const minutes = (Date.now() - started) / 60_000;

    const perMinute = { wchar: (after.wchar - before.wchar) / minutes, writeBytes: (after.writeBytes - before.writeBytes) / minutes };
    expect(perMinute.wchar).toBeLessThan(AIM_BYTES_PER_MINUTE);
    expect(perMinute.writeBytes).toBeLessThan(AIM_BYTES_PER_MINUTE);
    // it is still alive and keeping its leases: renewals did happen in the window
    expect(after.wchar).toBeGreaterThan(before.wchar);

    const wals = walSizes(join(dir.path, 'data'));
    expect(Object.keys(wals).sort()).toEqual(['coordination.sqlite-wal', 'events.sqlite-wal', 'views.sqlite-wal']);
    for (const [file, size] of Object.entries(wals)) expect({ file, size, under: size < WAL_BOUND_BYTES }).toEqual({ file, size, under: true });
  }, 60_000);
});
