import { SwitchboardError } from '@switchboard/core';
import { Command, CommanderError } from 'commander';
import { type CliIo, processIo } from './cli-io.js';
import { devCommand } from './commands/dev-command.js';
import { diffCommand } from './commands/diff-command.js';
import { evalCommand } from './commands/eval-command.js';
import { initCommand } from './commands/init-command.js';
import { exportCommand, replayCommand } from './commands/replay-command.js';
import { CLI_VERSION } from './version.js';

/** The exit code of a usage error, a bad dataset or a module that cannot be loaded. */
export const USAGE_EXIT = 2;

/**
 * Runs the `switchboard` command with `argv` (without the node and script
 * paths) and resolves with its exit code: 0, 1 when a score is below its
 * threshold or regressed, 2 for bad usage or input.
 *
 * @example
 * ```ts
 * const code = await runCli(['eval', 'src/app.ts', 'evals/routing.jsonl', '--min-accuracy', '0.9']);
 * ```
 */
export async function runCli(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  let code = 0;
  const exit = (value: number) => {
    code = value;
  };
  const program = new Command('switchboard')
    .description('Switchboard: start a project, serve it with the console, and know how it routes')
    .version(CLI_VERSION)
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  evalCommand(program, io, exit);
  replayCommand(program, io, exit);
  exportCommand(program, io, exit);
  diffCommand(program, io, exit);
  initCommand(program, io, exit);
  devCommand(program, io, exit);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : USAGE_EXIT;
    if (SwitchboardError.isInstance(error)) {
      const { message } = error as Error;
      const issues = (error as { issues?: readonly string[] }).issues ?? [];
      // A validation error's message ends with its issues: they are listed a line each instead.
      const headline = issues.length > 0 ? message.slice(0, message.indexOf(': ')) : message;
      io.stderr(`switchboard: ${headline}\n`);
      for (const issue of issues) io.stderr(`  ${issue}\n`);
      return USAGE_EXIT;
    }
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    if (missing) {
      io.stderr(`switchboard: no such file: ${(error as NodeJS.ErrnoException).path}\n`);
      return USAGE_EXIT;
    }
    throw error;
  }
}
