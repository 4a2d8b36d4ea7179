/**
 * The progress of a long CLI job on stderr (stdout may be its output: an export, a verdict): a bar
 * on a terminal; otherwise a plain line at the first update, so that a job that has started says
 * so at once, then at most one a second (a log file or a pipe gets a line, not a redraw).
 * `npm run history -- export` and `verify` use it.
 */
import cliProgress from 'cli-progress';

export interface ProgressState {
  /** How far the job is, in `unit`s, out of `total` (null until the job knows it). */
  done: number;
  total: number | null;
  /** Events handled so far. */
  events: number;
}

export interface StderrProgress {
  update(state: ProgressState): void;
  stop(): void;
}

export interface StderrProgressOptions {
  /** Where the lines go; process.stderr by default (a bar when it is a terminal). */
  stream?: NodeJS.WritableStream & { isTTY?: boolean };
  /** The clock the plain lines are spaced by (ms). */
  now?: () => number;
}

const PLAIN_PROGRESS_EVERY_MS = 1_000;

/**
 * `label` names the job (`export`), `unit` what `done` counts (`position`): a plain line reads
 * `export: 1200 events, position 1500 of 34000`.
 */
export function stderrProgress(label: string, unit: string, options: StderrProgressOptions = {}): StderrProgress {
  const stream = options.stream ?? process.stderr;
  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar({ stream, format: ` ${label} [{bar}] {percentage}% | {value}/{total} ${unit}s | {events} events`, hideCursor: true }, cliProgress.Presets.shades_classic);
    let started = false;
    return {
      update: (p) => {
        const total = Math.max(1, p.total ?? 1);
        if (!started) bar.start(total, 0, { events: 0 });
        started = true;
        bar.setTotal(total);
        bar.update(Math.min(total, p.done), { events: p.events });
      },
      stop: () => started && bar.stop(),
    };
  }
  const now = options.now ?? Date.now;
  let lastAt: number | null = null;
  return {
    update: (p) => {
      if (lastAt !== null && now() - lastAt < PLAIN_PROGRESS_EVERY_MS) return;
      lastAt = now();
      stream.write(`${label}: ${p.events} events, ${unit} ${p.done} of ${p.total ?? '-'}\n`);
    },
    stop: () => undefined,
  };
}
