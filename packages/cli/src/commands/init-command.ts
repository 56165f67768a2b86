import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { ValidationError } from '@switchboard/core';
import type { Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { TEMPLATE_FILES } from '../scaffold/template-files.js';
import { CLI_VERSION } from '../version.js';

/** A package name made of a directory's name: lower case, letters, digits, dots, dashes and underscores. */
function packageName(directory: string): string {
  const name = basename(directory)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+/, '');
  return name || 'switchboard-app';
}

/**
 * Writes the starter project into `directory` (created when missing; an
 * existing one must be empty unless `force`). Resolves with the files written.
 */
export async function scaffoldProject(directory: string, { force = false } = {}): Promise<string[]> {
  const existing = await readdir(directory).catch(() => [] as string[]);
  if (existing.length > 0 && !force)
    throw new ValidationError({ message: `${directory} is not empty; pass --force to write into it anyway` });
  const name = packageName(directory);
  const written: string[] = [];
  for (const [path, template] of Object.entries(TEMPLATE_FILES)) {
    const target = join(directory, path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, template.replaceAll('{{name}}', name).replaceAll('{{version}}', CLI_VERSION));
    written.push(path);
  }
  return written;
}

/** `switchboard init <dir>`: scaffolds a project that installs and passes its own tests. */
export function initCommand(program: Command, io: CliIo, exit: (code: number) => void): void {
  program
    .command('init')
    .description('start a project: an orchestrator, two agents, a server, a test and a routing dataset')
    .argument('<dir>', 'where to write it (created when missing)')
    .option('--force', 'write into a directory that is not empty')
    .action(async (directory: string, options: { force?: boolean }) => {
      const target = resolve(io.cwd, directory);
      const files = await scaffoldProject(target, { force: options.force === true });
      io.stdout(
        [
          `Wrote ${files.length} files to ${target}:`,
          ...files.map((file) => `  ${file}`),
          '',
          'Next:',
          `  cd ${directory}`,
          '  npm install',
          '  npm test',
          '  npm run eval',
          '',
        ].join('\n'),
      );
      exit(0);
    });
}
