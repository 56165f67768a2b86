import { fork } from 'node:child_process';
import { compileServer } from './compile.js';

/**
 * Runs a compiled bench script in a child process of its own (a fresh heap and JIT, so that one
 * measurement never inherits another's) and returns the `key` of the message it sends.
 */
export async function runChild<T>(
  script: string,
  key: string,
  { execArgv = [], env = {} }: { execArgv?: string[]; env?: Record<string, string> } = {},
): Promise<T> {
  const child = fork(await compileServer(script), {
    execArgv,
    env: { ...process.env, ...env, NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    return await new Promise<T>((resolve, reject) => {
      child.once('message', (message: Record<string, T>) => resolve(message[key] as T));
      child.once('exit', (code) => reject(new Error(`${script} exited with code ${code}`)));
    });
  } finally {
    child.kill('SIGTERM');
  }
}
