// Starts the real server entry point (src/main.ts) as a child process, for tests that run side by side
// (`describe.concurrent`) or share one server. `startServer` in ./server-process.ts kills every server it
// started after each test, which would end a concurrent sibling's server mid-test; here the caller decides.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'vitest';
import { type StartedServer, serverEnv } from './server-process.js';

const main = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

/**
 * Failure guard only: how long a process may take to print its banner. Several start at once here (tsx
 * compiles on start) on a shared 2-core machine, so it is longer than `server-process.ts`'s 8 s.
 */
const START_TIMEOUT_MS = 20_000;

/** A started server that its owner ends. */
export interface SpawnedServer extends StartedServer {
  /** SIGKILL unless it already exited, then waits for the exit (so that nothing outlives its owner). */
  kill(): Promise<void>;
}

/**
 * Starts `src/main.ts` as `startServer` does (node --import tsx, PORT=0 on loopback, no Redis, OpenAI or
 * tracing from the caller's environment unless `env` sets them), but leaves ending it to the caller:
 * `afterAll(server.kill)` for a server shared by several tests, or {@link serverForTest}.
 */
export function spawnServer(env: Record<string, string>): SpawnedServer {
  const child = spawn(process.execPath, ['--import', 'tsx', main], {
    env: serverEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let timer: NodeJS.Timeout | undefined;
  const listening = new Promise<string>((resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`server start-up took longer than ${START_TIMEOUT_MS} ms: ${stderr}`)),
      START_TIMEOUT_MS,
    );
    child.stdout?.on('data', (chunk) => {
      stdout += chunk;
      // The tracing line is logged after the listening line: wait for the banner's last line (JSON, not a TTY).
      const match = /listening on (http:\/\/[^\s"]+)/.exec(stdout);
      if (match && /"msg":"Try: /.test(stdout)) resolve(match[1] as string);
    });
    void exited.then((code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
  });
  const stopTimer = () => clearTimeout(timer);
  // Also marks a failed start-up as handled: the tests that need the server await `listening`.
  listening.then(stopTimer, stopTimer);
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  return { child, listening, exited, output: () => ({ stdout, stderr }), kill };
}

/**
 * {@link spawnServer} for one test: killed when that test ends. Takes the test's own context, since
 * vitest's global hooks cannot tell concurrent tests apart.
 */
export function serverForTest({ onTestFinished }: TestContext, env: Record<string, string>): SpawnedServer {
  const server = spawnServer(env);
  onTestFinished(server.kill);
  return server;
}
