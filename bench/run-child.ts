import { fork } from 'node:child_process';
import { compileServer } from './compile.js';

/** How to start a bench child. */
export interface ChildOptions {
  execArgv?: string[];
  env?: Record<string, string>;
}

/**
 * Runs a compiled bench script in a child process of its own (a fresh heap and JIT, so that one
 * measurement never inherits another's) and returns the `key` of the message it sends.
 */
export async function runChild<T>(script: string, key: string, options: ChildOptions = {}): Promise<T> {
  return runScript<T>(await compileServer(script), key, options);
}

/** Runs an already compiled script (`compiled`, a path) as {@link runChild} does. */
export async function runScript<T>(
  compiled: string,
  key: string,
  { execArgv = [], env = {} }: ChildOptions = {},
): Promise<T> {
  const child = fork(compiled, {
    execArgv: [...execArgv, ...nodeFlags()],
    env: { ...process.env, ...env, NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    return await new Promise<T>((resolve, reject) => {
      child.once('message', (message: Record<string, T>) => resolve(message[key] as T));
      child.once('exit', (code) => reject(new Error(`${compiled} exited with code ${code}`)));
    });
  } finally {
    child.kill('SIGTERM');
  }
}

/**
 * V8 or Node flags every bench child gets, from `BENCH_NODE_FLAGS` (space-separated), e.g.
 * `--no-allocation-site-pretenuring` to measure what docs/performance.md says it saves.
 */
export function nodeFlags(): string[] {
  return (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== '');
}
