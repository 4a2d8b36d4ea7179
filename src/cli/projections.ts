/**
 * Operator commands for views:
 *   npm run projections -- status
 *   npm run projections -- rebuild <name> | --all
 * A rebuild fills fresh (shadow) collections from the whole log, then swaps them in with one
 * write; a running service keeps serving the old view until then. On a terminal the progress is
 * a bar per projection; otherwise (a pipe, a CI log) one plain line per update, at most once a
 * second per projection. Every result is printed either way; a failed projection does not stop
 * the others, and makes the exit code 1.
 */
import 'reflect-metadata';
import { Command } from 'commander';
import cliProgress from 'cli-progress';
import Table from 'cli-table3';
import { createLogger } from '../platform/logging/logger.js';
import type { Platform } from '../platform/platform.js';
import type { RebuildProgress } from '../platform/projections/projection-runner.js';
import { isReactor } from '../platform/projections/projection.js';
import { cliConfig, withDataDirOptions, type DataDirOptions } from './data-dir.js';
import { cliProgram, runCli, UsageError } from './usage.js';

const PLAIN_PROGRESS_EVERY_MS = 1_000;
/** Why `rebuild --all` leaves reactors out (and a reactor named alone is refused). */
const REACTORS_NOT_REBUILT =
  'Reactors act on events (they send notifications, open and resolve incidents) rather than build a view: replaying history through them would do it all again, so they are never rebuilt and go on from their checkpoints.';

async function openPlatform(): Promise<Platform> {
  const config = cliConfig(program.opts<DataDirOptions>());
  // Loaded only now: the whole application graph takes a second, which `--help` and a refused
  // data dir should not wait for.
  const [{ projections, upcasters }, { createPlatform }] = await Promise.all([import('../app/contexts.js'), import('../platform/platform.js')]);
  return createPlatform(config, { projections: projections(), upcasters: upcasters(), withRunner: true, withTransport: false, logger: createLogger('warn'), mintAdminToken: false });
}

/** Columns without borders, padded, one header row: readable on a terminal and easy to grep. */
function columns(head: string[], rows: Array<Array<string | number>>): string {
  const none = { top: '', 'top-mid': '', 'top-left': '', 'top-right': '', bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '', left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: '  ' };
  const table = new Table({ head, chars: none, style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 } });
  table.push(...rows.map((row) => row.map(String)));
  return table.toString().split('\n').map((line) => line.trimEnd()).join('\n');
}

async function status(): Promise<void> {
  const platform = await openPlatform();
  try {
    const rows = await platform.runner!.status();
    const table = rows.map((row) => [
      row.name,
      row.activeVersion === row.version ? row.version : `${row.activeVersion ?? '-'} (code ${row.version}: rebuilt on start)`,
      row.generation ?? '-',
      row.position ?? '-',
      row.head ?? '-',
      row.lag,
    ]);
    process.stdout.write(`${columns(['PROJECTION', 'VERSION', 'GENERATION', 'POSITION', 'HEAD', 'LAG'], table)}\n`);
  } finally {
    await platform.close();
  }
}

interface ProgressDisplay {
  start(name: string): void;
  update(progress: RebuildProgress, rate: number): void;
  result(line: string): void;
  stop(): void;
}

function barDisplay(): ProgressDisplay {
  const bars = new cliProgress.MultiBar(
    { format: ' {name} [{bar}] {percentage}% | {value}/{total} positions | {events} events | {rate}/s', hideCursor: true, clearOnComplete: false },
    cliProgress.Presets.shades_classic,
  );
  let bar: cliProgress.SingleBar | null = null;
  return {
    start: (name) => (bar = bars.create(1, 0, { name, events: 0, rate: 0 })),
    update: (progress, rate) => {
      const total = Math.max(1, progress.head ?? 1);
      bar!.setTotal(total);
      bar!.update(Math.min(total, progress.position ?? 0), { events: progress.applied, rate });
    },
    result: (line) => {
      bar?.update(bar.getTotal());
      bars.log(`${line}\n`);
    },
    stop: () => bars.stop(),
  };
}

function plainDisplay(): ProgressDisplay {
  let lastAt = 0;
  return {
    start: (name) => {
      lastAt = Date.now();
      process.stdout.write(`${name}: rebuilding\n`);
    },
    update: (progress, rate) => {
      if (Date.now() - lastAt < PLAIN_PROGRESS_EVERY_MS) return;
      lastAt = Date.now();
      process.stdout.write(`${progress.name}: ${progress.position ?? 0}/${progress.head ?? 0} positions, ${progress.applied} events, ${rate}/s\n`);
    },
    result: (line) => process.stdout.write(`${line}\n`),
    stop: () => undefined,
  };
}

async function rebuild(names: string[], all: boolean): Promise<void> {
  const platform = await openPlatform();
  const runner = platform.runner!;
  const known = runner.projections.map((p) => p.name);
  const reactors = runner.projections.filter(isReactor).map((p) => p.name);
  const targets = all ? runner.projections.filter((p) => !isReactor(p)).map((p) => p.name) : names;
  try {
    if (targets.length === 0) throw new UsageError(`Name a projection or pass --all. Known: ${known.join(', ')}`);
    const unknown = targets.filter((name) => !known.includes(name));
    if (unknown.length > 0) throw new UsageError(`Unknown projection ${unknown.join(', ')}. Known: ${known.join(', ')}`);
    const named = targets.filter((name) => reactors.includes(name));
    if (named.length > 0) throw new UsageError(`${named.join(', ')}: ${REACTORS_NOT_REBUILT}`);
    if (all && reactors.length > 0) process.stdout.write(`reactors: ${reactors.join(', ')} not rebuilt. ${REACTORS_NOT_REBUILT}\n`);
    const display = process.stdout.isTTY ? barDisplay() : plainDisplay();
    let failed = 0;
    try {
      for (const name of targets) {
        const started = Date.now();
        display.start(name);
        try {
          const result = await runner.rebuild(name, (progress) => {
            display.update(progress, Math.round(progress.applied / Math.max(0.001, (Date.now() - started) / 1000)));
          });
          display.result(`${name}: generation ${result.generation} swapped in after ${result.applied} events in ${((Date.now() - started) / 1000).toFixed(1)} s`);
        } catch (error) {
          failed++;
          display.result(`${name}: FAILED: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    } finally {
      display.stop();
    }
    if (failed > 0) {
      process.stderr.write(`${failed} of ${targets.length} rebuilds failed.\n`);
      process.exitCode = 1;
    }
  } finally {
    await platform.close();
  }
}

const program = cliProgram(withDataDirOptions(new Command('projections')), '(npm run projections -- --help for usage)').description('Inspect and rebuild the views built from the event log');
program.command('status').description('version, position and lag of every projection').action(status);
program
  .command('rebuild')
  .description('rebuild views from the whole log into shadow storage, then swap atomically')
  .argument('[names...]', 'projections to rebuild')
  .option('--all', 'rebuild every projection (reactors are never rebuilt)')
  .action((names: string[], options: { all?: boolean }) => rebuild(names, Boolean(options.all)));

runCli(program);
