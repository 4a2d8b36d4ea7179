/**
 * How every CLI parses its arguments and exits (README: exit codes): 0 on success and for
 * `--help`; 2 for a usage error (an unknown command or option, a missing or malformed argument,
 * commander's or a `UsageError`); 1 when the command itself failed. Commander prints its own
 * message and the help hint before `runCli` sees the error.
 */
import { Command, CommanderError } from 'commander';

export const USAGE_ERROR = 2;

/** A command line the program cannot act on (a bad argument value, an unknown name). */
export class UsageError extends Error {}

/**
 * A program that reports usage errors instead of exiting on them. Call before adding commands:
 * commands inherit the setting when they are created.
 */
export function cliProgram(program: Command, helpHint: string): Command {
  return program.exitOverride().showHelpAfterError(helpHint);
}

/** Runs the program and exits with the code the README promises. `exitWhenDone`: exit 0 once the command resolved. */
export function runCli(program: Command, options: { exitWhenDone?: boolean } = {}): void {
  program
    .parseAsync(process.argv)
    .then(() => {
      if (options.exitWhenDone) process.exit(process.exitCode ?? 0);
    })
    .catch((error: unknown) => {
      if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : USAGE_ERROR);
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(error instanceof UsageError ? USAGE_ERROR : 1);
    });
}

/** A `--json` option's body; malformed JSON is a usage error. */
export function jsonOption(text: string | undefined): Record<string, unknown> {
  if (!text) return {};
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    throw new UsageError(`--json is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
}
