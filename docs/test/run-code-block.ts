import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DOCS } from './code-block-pages.js';

/** How one run of a block went. */
export interface BlockRun {
  exitCode: number | null;
  /** Whether it was stopped for running longer than the timeout. */
  timedOut: boolean;
  stdout: string;
  stderr: string;
}

/** Options of {@link runCodeBlock}. */
export interface RunCodeBlockOptions {
  /** The block's code, written as it is to `file`. */
  code: string;
  /** Where to write it: a `.ts` file under docs/, so that the packages resolve from docs/node_modules. */
  file: string;
  /** The directory it runs in. */
  cwd: string;
  /** Its whole environment. */
  env: Record<string, string>;
  /** How long it may run before it is stopped, with the processes it started. */
  timeoutMs: number;
}

/** tsx's loader, by its absolute URL, so that `--import` finds it from any working directory. */
const TSX = pathToFileURL(createRequire(join(DOCS, 'package.json')).resolve('tsx')).href;

/** The variables of this environment a reader's shell has too; the test's own (vitest's, `NODE_ENV`) stay out. */
const PASSED_ON = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'CI'];

/** The environment a block runs in: the reader's basics and `extra`. */
export function blockEnvironment(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { NO_COLOR: '1' };
  for (const name of PASSED_ON) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...extra };
}

/**
 * Runs a block as a reader runs a file of theirs, `node --import tsx file.ts`, in a process group of its
 * own, so that what it starts (an MCP server over stdio, say) is stopped with it at the timeout.
 */
export function runCodeBlock({ code, file, cwd, env, timeoutMs }: RunCodeBlockOptions): Promise<BlockRun> {
  writeFileSync(file, code);
  const child = spawn(process.execPath, ['--import', TSX, file], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  let timedOut = false;
  let exitCode: number | null = null;
  /** Stops the block's process group: what it started goes with it. */
  const stopGroup = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // The group is gone already.
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stopGroup();
  }, timeoutMs);
  child.once('exit', (code) => {
    exitCode = code;
    // Whatever it left running (a server it did not close) would keep its output open: stopped too.
    stopGroup();
  });
  return new Promise((resolve) => {
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ exitCode: null, timedOut, stdout, stderr: `${stderr}${error.message}` });
    });
    child.once('close', () => {
      clearTimeout(timer);
      resolve({ exitCode, timedOut, stdout, stderr });
    });
  });
}
