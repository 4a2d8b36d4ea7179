/**
 * Operator commands for views:
 *   npm run projections -- status
 *   npm run projections -- rebuild <name> | --all
 * A rebuild fills fresh (shadow) collections from the whole log with a progress display, then
 * swaps them in with one write; a running service keeps serving the old view until then.
 */
import 'reflect-metadata';
import { Command } from 'commander';
import cliProgress from 'cli-progress';
import { projections } from '../app/contexts.js';
import { loadConfig } from '../platform/config/config.js';
import { createLogger } from '../platform/logging/logger.js';
import { createPlatform, type Platform } from '../platform/platform.js';
import { isReactor } from '../platform/projections/projection.js';

async function openPlatform(): Promise<Platform> {
  const config = loadConfig();
  return createPlatform(config, { projections: projections(), withRunner: true, withTransport: false, logger: createLogger('warn') });
}

async function status(): Promise<void> {
  const platform = await openPlatform();
  try {
    const rows = await platform.runner!.status();
    const table = rows.map((row) => ({
      projection: row.name,
      version: row.activeVersion === row.version ? String(row.version) : `${row.activeVersion ?? '-'} (code ${row.version}: rebuild on start)`,
      generation: row.generation ?? '-',
      position: row.position ?? '-',
      head: row.head ?? '-',
      lag: row.lag,
    }));
    console.table(table);
  } finally {
    await platform.close();
  }
}

async function rebuild(names: string[], all: boolean): Promise<void> {
  const platform = await openPlatform();
  const runner = platform.runner!;
  const targets = all ? runner.projections.filter((p) => !isReactor(p)).map((p) => p.name) : names;
  if (targets.length === 0) throw new Error('Name a projection or pass --all. Known: ' + runner.projections.map((p) => p.name).join(', '));
  const bars = new cliProgress.MultiBar(
    { format: ' {name} [{bar}] {percentage}% | {value}/{total} positions | {events} events | {rate}/s', hideCursor: true, clearOnComplete: false, noTTYOutput: true, notTTYSchedule: 1000 },
    cliProgress.Presets.shades_classic,
  );
  try {
    for (const name of targets) {
      const started = Date.now();
      const bar = bars.create(1, 0, { name, events: 0, rate: 0 });
      const result = await runner.rebuild(name, (progress) => {
        const total = Math.max(1, progress.head ?? 1);
        const rate = Math.round(progress.applied / Math.max(0.001, (Date.now() - started) / 1000));
        bar.setTotal(total);
        bar.update(Math.min(total, progress.position ?? 0), { events: progress.applied, rate });
      });
      bar.update(bar.getTotal(), { events: result.applied });
      bars.log(`${name}: generation ${result.generation} swapped in after ${result.applied} events in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    }
  } finally {
    bars.stop();
    await platform.close();
  }
}

const program = new Command('projections').description('Inspect and rebuild the views built from the event log');
program.command('status').description('position and lag of every projection').action(status);
program
  .command('rebuild')
  .description('rebuild views from the whole log into shadow storage, then swap atomically')
  .argument('[names...]', 'projections to rebuild')
  .option('--all', 'rebuild every projection')
  .action((names: string[], options: { all?: boolean }) => rebuild(names, Boolean(options.all)));

program.parseAsync(process.argv).catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
