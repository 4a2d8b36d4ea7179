/**
 * The one rule every operator CLI follows for its data directory: say which one it uses, and
 * refuse one that holds no store instead of silently creating a fresh, empty one (a CLI run from
 * the wrong directory would otherwise report empty state, or mint a new admin token).
 *
 *   const program = withDataDirOptions(new Command('retention'));
 *   ...
 *   const config = cliConfig(program.opts());   // throws CliDataDirError when there is no store
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { loadConfig, type AppConfig } from '../platform/config/config.js';

/** The file whose presence means "this data dir holds a store" (the event log: everything else derives from it). */
export const EVENT_LOG_FILE = 'events.sqlite';

export interface DataDirOptions {
  /** `--data-dir`: overrides DATA_DIR. */
  dataDir?: string;
  /** `--create`: allow starting an empty store in a directory that holds none. */
  create?: boolean;
}

export class CliDataDirError extends Error {
  constructor(readonly dataDir: string) {
    super(
      `No store in data dir ${dataDir} (no ${EVENT_LOG_FILE} there). ` +
        `Run from the directory that holds the service's data, set DATA_DIR or pass --data-dir <path>; ` +
        `pass --create to start an empty store there.`,
    );
    this.name = 'CliDataDirError';
  }
}

/** Adds `--data-dir <path>` and `--create` to a CLI program (global options, listed in every subcommand's help too). */
export function withDataDirOptions(program: Command): Command {
  return program
    .configureHelp({ showGlobalOptions: true })
    .option('--data-dir <path>', 'directory holding the SQLite stores (default: DATA_DIR, else ./data)')
    .option('--create', 'create an empty store when the data directory holds none');
}

/** Whether the configured stores exist: the SQLite event log, unless the log lives in EventStoreDB. */
export function dataDirHoldsStore(config: Pick<AppConfig, 'dataDir' | 'eventStoreUrl'>): boolean {
  return config.eventStoreUrl !== null || existsSync(join(config.dataDir, EVENT_LOG_FILE));
}

/**
 * Loads the configuration for a CLI, applies `--data-dir`, refuses a data dir without a store
 * unless `--create` was given, and reports the data dir in use on `report` (stderr by default, so
 * stdout stays the command's output).
 */
export function cliConfig(
  options: DataDirOptions,
  env: Record<string, string | undefined> = process.env,
  report: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): AppConfig {
  const config = loadConfig(options.dataDir ? { ...env, DATA_DIR: options.dataDir } : env);
  const holdsStore = dataDirHoldsStore(config);
  if (!holdsStore && !options.create) throw new CliDataDirError(config.dataDir);
  if (!holdsStore) mkdirSync(config.dataDir, { recursive: true });
  const events = config.eventStoreUrl ? `, events in EventStoreDB` : '';
  report(`data dir: ${config.dataDir}${holdsStore ? '' : ' (new, empty store)'}${events}`);
  return config;
}
