import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { takeProcessSlot } from '../../../src/platform/coordination/process-slots.js';

describe('process slots (who a restarted process follows)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'slots-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('gives live holders different slots and a process started after one let go that slot, with its id', () => {
    const first = takeProcessSlot(dir)!;
    const second = takeProcessSlot(dir)!;
    expect(first.id).not.toBe(second.id);
    first.release(); // the process stopped (a SIGKILL lets the lock go the same way)
    const restarted = takeProcessSlot(dir)!;
    expect(restarted.id).toBe(first.id);
    const another = takeProcessSlot(dir)!;
    expect([first.id, second.id]).not.toContain(another.id);
    for (const slot of [second, restarted, another]) slot.release();
  });
});
