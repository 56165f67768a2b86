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

/** Runs the CLI in `cwd` with its output captured. */
export async function cli(
  cwd: string,
  ...argv: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
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
    progress: false,
  };
  const code = await runCli(argv, io);
  return { code, stdout, stderr };
}

/** Writes `text` to `path` under `folder`, creating directories. */
export async function put(folder: string, path: string, text: string): Promise<void> {
  await mkdir(dirname(join(folder, path)), { recursive: true });
  await writeFile(join(folder, path), text);
}
