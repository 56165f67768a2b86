import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { basename } from 'node:path';

/** A script started by {@link spawnListening}. */
export interface ListeningProcess {
  child: ChildProcess;
  /** The URL it printed after `listening on`. */
  url: string;
  /** Resolves with `[code, signal]` when it exits. */
  exited: Promise<[number | null, NodeJS.Signals | null]>;
  /** What it wrote to stderr so far. */
  stderr(): string;
}

/**
 * Starts a TypeScript script as its `start` script does (node with tsx),
 * on a free port unless `env` says otherwise, and resolves once it prints
 * `listening on <url>`; rejects with its stderr when it exits first.
 */
export async function spawnListening(script: string, env: NodeJS.ProcessEnv = {}): Promise<ListeningProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk) => {
      stdout += chunk;
      const found = /listening on (http:\/\/\S+)/.exec(stdout)?.[1];
      if (found) resolve(found);
    });
    exited.then(() => reject(new Error(`${basename(script)} exited before listening: ${stderr}`)));
  });
  return { child, url, exited, stderr: () => stderr };
}
