/**
 * The plain progress lines of a long CLI job (src/cli/stderr-progress.ts), as a log file or a pipe
 * gets them: the first update at once, then at most one a second by the given clock.
 */
import { PassThrough } from 'node:stream';
import { stderrProgress } from '../../../src/cli/stderr-progress.js';

function plainStream(): { stream: PassThrough; lines: () => string[] } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream, lines: () => text.split('\n').filter((line) => line !== '') };
}

describe('stderrProgress (not a terminal)', () => {
  it('writes the first update at once, then at most one a second', async () => {
    const { stream, lines } = plainStream();
    let now = 10_000;
    const progress = stderrProgress('verify', 'stream', { stream, now: () => now });

    progress.update({ done: 0, total: null, events: 0 });
    progress.update({ done: 0, total: 3, events: 0 });
    now += 999;
    progress.update({ done: 1, total: 3, events: 40 });
    now += 1;
    progress.update({ done: 2, total: 3, events: 80 });
    progress.update({ done: 3, total: 3, events: 120 });
    progress.stop();
    await new Promise((resolve) => setImmediate(resolve));

    expect(lines()).toEqual(['verify: 0 events, stream 0 of -', 'verify: 80 events, stream 2 of 3']);
  });
});
