/**
 * Operator commands for check retention (CHECK_RETENTION_DAYS):
 *   npm run retention -- status    bytes per store, oldest retained check, what the next pass removes
 *   npm run retention -- apply     one pass now (the service also runs one every hour)
 * `--now <RFC 3339>` measures the horizon from another instant (tests, simulations).
 */
import 'reflect-metadata';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import cliProgress from 'cli-progress';
import Table from 'cli-table3';
import { Command } from 'commander';
import { projections, retiredProjections, upcasters } from '../app/contexts.js';
import { CheckRetention, RetentionBusyError } from '../checks/application/retention.js';
import { ROLLUPS_PROJECTION } from '../analytics/views/rollups/view.js';
import { ANALYTICS_ENDPOINTS_PROJECTION } from '../analytics/views/endpoints/view.js';
import type { AppConfig } from '../platform/config/config.js';
import { createLogger } from '../platform/logging/logger.js';
import { parseRfc3339 } from '../platform/time/rfc3339.js';
import { createPlatform, type Platform } from '../platform/platform.js';
import { cliConfig, withDataDirOptions, type DataDirOptions } from './data-dir.js';
import { cliProgram, runCli } from './usage.js';

/** Plain tables when the output is not a terminal (no colour codes in files and pipes). */
const TABLE_STYLE = process.stdout.isTTY ? {} : { style: { head: [], border: [] } };

/** The views that drop summarized checks (the rollups' raw rows are every check's list row too); apply waits for them before giving space back. */
const RETENTION_VIEWS = [ROLLUPS_PROJECTION, ANALYTICS_ENDPOINTS_PROJECTION];
const CATCH_UP_MS = 120_000;

function nowFrom(option: string | undefined): number {
  if (option === undefined) return Date.now();
  const parsed = parseRfc3339(option);
  if (parsed === null) throw new Error(`--now must be an RFC 3339 time, got "${option}"`);
  return parsed;
}

async function openPlatform(config: AppConfig, withRunner: boolean): Promise<Platform> {
  return createPlatform(config, { projections: projections(), retiredProjections: retiredProjections(), upcasters: upcasters(), withRunner, withTransport: false, logger: createLogger('warn'), mintAdminToken: false });
}

/** Bytes of each embedded store's files (database and write-ahead log); null for a server store. */
function storeBytes(config: AppConfig): Array<[store: string, bytes: number | null]> {
  const files = existsSync(config.dataDir) ? readdirSync(config.dataDir) : [];
  const sqlite = (base: string) => files.filter((f) => f === base || f.startsWith(`${base}-`)).reduce((sum, f) => sum + statSync(join(config.dataDir, f)).size, 0);
  return [
    ['event log', config.eventStoreUrl ? null : sqlite('events.sqlite')],
    ['views', config.mongodbUrl ? null : sqlite('views.sqlite')],
    ['coordination', config.mongodbUrl ? null : sqlite('coordination.sqlite')],
  ];
}

function formatBytes(bytes: number | null): string {
  if (bytes === null) return 'on the server';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

async function status(options: { now?: string }): Promise<void> {
  const now = nowFrom(options.now);
  const platform = await openPlatform(cliConfig(program.opts<DataDirOptions>()), false);
  try {
    const retention = new CheckRetention(platform.events, { days: platform.config.checkRetentionDays, storedEvents: platform.storedEvents });
    const report = await retention.status(now);
    const stores = new Table({ head: ['store', 'size'], ...TABLE_STYLE });
    for (const [store, bytes] of storeBytes(platform.config)) stores.push([store, formatBytes(bytes)]);
    console.log(`CHECK_RETENTION_DAYS=${platform.config.checkRetentionDays}: checks before ${report.horizon} leave the log at the next pass.`);
    console.log(stores.toString());
    const oldest = report.endpoints.map((e) => e.oldest_retained).filter((at): at is string => at !== null).sort()[0] ?? null;
    const removable = report.endpoints.reduce((sum, e) => sum + e.removable, 0);
    console.log(`Oldest retained check: ${oldest ?? 'none'}`);
    console.log(`The next pass removes ${removable} check(s) of ${report.endpoints.filter((e) => e.removable > 0).length} endpoint(s).`);
    const rows = report.endpoints.filter((e) => e.oldest_retained !== null);
    if (rows.length > 0) {
      const table = new Table({ head: ['endpoint', 'oldest retained check', 'next pass removes'], ...TABLE_STYLE });
      for (const e of rows) table.push([e.endpoint_id, e.oldest_retained ?? '-', e.removable]);
      console.log(table.toString());
    }
  } finally {
    await platform.close();
  }
}

async function waitForViews(platform: Platform): Promise<boolean> {
  const head = await platform.events.headPosition();
  if (head === null) return true;
  const deadline = Date.now() + CATCH_UP_MS;
  while (Date.now() < deadline) {
    if (await platform.freshness.waitFor(head, RETENTION_VIEWS)) return true;
  }
  return false;
}

/** Makes an embedded file created before auto_vacuum able to shrink: one full VACUUM (service stopped). */
function vacuumOnce(config: AppConfig): void {
  for (const [file, remote] of [['events.sqlite', config.eventStoreUrl], ['views.sqlite', config.mongodbUrl]] as const) {
    const path = join(config.dataDir, file);
    if (remote || !existsSync(path)) continue;
    const db = new Database(path);
    try {
      if (db.pragma('auto_vacuum', { simple: true }) !== 2) {
        console.log(`${file}: VACUUM (once, so that it can shrink from now on)`);
        db.pragma('auto_vacuum = INCREMENTAL');
        db.exec('VACUUM');
      }
    } finally {
      db.close();
    }
  }
}

async function apply(options: { now?: string; vacuum?: boolean }): Promise<void> {
  const now = nowFrom(options.now);
  const config = cliConfig(program.opts<DataDirOptions>());
  if (options.vacuum) vacuumOnce(config);
  const platform = await openPlatform(config, true);
  const tty = process.stdout.isTTY === true;
  const bar = tty ? new cliProgress.SingleBar({ format: ' retention [{bar}] {value}/{total} endpoints | {summaries} summaries | {removed} checks removed', hideCursor: true }, cliProgress.Presets.shades_classic) : null;
  try {
    // Projections apply the summaries: here when no running service does (its leases win otherwise).
    await platform.runner!.start();
    const retention = new CheckRetention(platform.events, { days: platform.config.checkRetentionDays, storedEvents: platform.storedEvents });
    console.log(`Removing checks before ${new Date(retention.horizon(now)).toISOString()} (CHECK_RETENTION_DAYS=${platform.config.checkRetentionDays}).`);
    let started = false;
    let result;
    for (;;) {
      try {
        result = await retention.apply(now, {
          coordination: platform.coordination,
          owner: platform.instanceId,
          onProgress: (p) => {
            if (!bar) return;
            if (!started) bar.start(p.endpoints, 0, { summaries: 0, removed: 0 });
            started = true;
            bar.update(p.endpoint, { summaries: p.summaries, removed: p.removed });
          },
        });
        break;
      } catch (error) {
        if (!(error instanceof RetentionBusyError)) throw error;
        console.log('Another process is applying retention; waiting for it to finish.');
        await new Promise((resolve) => setTimeout(resolve, 5000));
      }
    }
    bar?.stop();
    console.log(`${result.summaries} summaries appended, ${result.removed} checks removed from the log, ${result.endpoints} endpoints looked at.`);
    if (await waitForViews(platform)) {
      // The first time, this converts the views file (one VACUUM; see SqliteReadStore.reclaimSpace).
      await platform.views.reclaimSpace?.();
      const dropped = await platform.runner!.dropStaleGenerations();
      if (dropped.length > 0) console.log(`Dropped stale view generations: ${dropped.join(', ')}`);
      console.log('Views updated; freed space given back.');
    } else {
      console.log('The views have not caught up yet; they drop the removed checks as their projector applies the summaries.');
    }
  } finally {
    bar?.stop();
    await platform.close();
  }
}

const program = cliProgram(withDataDirOptions(new Command('retention')), '(npm run retention -- --help for usage)').description(
  'Check retention: summarize, then remove, raw checks older than CHECK_RETENTION_DAYS',
);
program.command('status').description('bytes per store, oldest retained check, what the next pass removes').option('--now <time>', 'measure the horizon from this RFC 3339 time').action(status);
program
  .command('apply')
  .description('run one retention pass now (the service runs one every hour)')
  .option('--now <time>', 'measure the horizon from this RFC 3339 time')
  .option('--vacuum', 'first VACUUM embedded files created before retention existed, so they can shrink (stop the service first)')
  .action(apply);

// Exits when done: the store handles of a pass must not keep the process alive.
runCli(program, { exitWhenDone: true });
