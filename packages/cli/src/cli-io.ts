import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ValidationError } from '@switchboard/core';
import type { EvalReport } from '@switchboard/runtime/eval';

/** Where a command writes and what it runs in: the process's by default, captured in tests. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  cwd: string;
  /** Draw progress on stderr (a terminal). */
  progress: boolean;
}

/** The process's own streams and directory. */
export function processIo(): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    cwd: process.cwd(),
    progress: process.stderr.isTTY === true,
  };
}

/** Writes `text` to the file at `target` (relative to the working directory), or to stdout for `-`. */
export async function writeOutput(io: CliIo, target: string, text: string): Promise<void> {
  if (target === '-') io.stdout(text);
  else await writeFile(resolve(io.cwd, target), text);
}

/** Reads a report written by `switchboard eval --json`. */
export async function readReport(io: CliIo, path: string): Promise<EvalReport> {
  const text = await readFile(resolve(io.cwd, path), 'utf8');
  let report: unknown;
  try {
    report = JSON.parse(text);
  } catch (error) {
    throw new ValidationError({ message: `${path} is not JSON (${(error as Error).message})` });
  }
  const candidate = report as Partial<EvalReport> | null;
  if (candidate?.version !== 1 || !Array.isArray(candidate.results) || typeof candidate.metrics !== 'object')
    throw new ValidationError({ message: `${path} is not a report of 'switchboard eval --json'` });
  return candidate as EvalReport;
}

/** A progress bar on stderr, redrawn in place; `done()` ends its line. */
export function progressBar(
  io: CliIo,
  label: string,
): { update(done: number, total: number): void; done(): void } {
  let drawn = -1;
  return {
    update(done, total) {
      const width = 30;
      const filled = Math.round((done / total) * width);
      // Redrawn only when a cell fills, so a fast run writes a few dozen times, not once per case.
      if (!io.progress || (filled === drawn && done !== total)) return;
      drawn = filled;
      io.stderr(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`);
    },
    done() {
      if (io.progress && drawn >= 0) io.stderr('\n');
    },
  };
}
