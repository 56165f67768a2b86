import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CliIo } from '../src/cli-io.js';
import { runCli } from '../src/main.js';

/** A folder inside the package (so that its modules resolve the workspace's packages), emptied first. */
export async function workFolder(name: string): Promise<string> {
  const folder = join(dirname(fileURLToPath(import.meta.url)), '..', 'test-output', name);
  await rm(folder, { recursive: true, force: true });
  await mkdir(folder, { recursive: true });
  return folder;
}

/** What a run of the CLI printed, and its exit code. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in `cwd` with its output captured, drawing progress as on a terminal when `progress` is set. */
export async function cliWith(
  { progress }: { progress: boolean },
  cwd: string,
  ...argv: string[]
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    cwd,
    progress,
  };
  const code = await runCli(argv, io);
  return { code, stdout, stderr };
}

/** Runs the CLI in `cwd` with its output captured. */
export function cli(cwd: string, ...argv: string[]): Promise<CliRun> {
  return cliWith({ progress: false }, cwd, ...argv);
}

/** Writes `text` to `path` under `folder`, creating directories. */
export async function put(folder: string, path: string, text: string): Promise<void> {
  await mkdir(dirname(join(folder, path)), { recursive: true });
  await writeFile(join(folder, path), text);
}
