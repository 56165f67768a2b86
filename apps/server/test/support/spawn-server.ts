// Starts the real server entry point (src/main.ts) as a child process, as a user runs it. The caller decides
// when it ends: `startServer` in ./server-process.ts kills it after the test, `serverForTest` after one of
// several tests running side by side (`describe.concurrent`), `afterAll(server.kill)` for a shared one.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'vitest';

const main = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

/**
 * Failure guard only: how long a process may take to print its banner by default. Several may start at
 * once (tsx compiles on start) on a shared 2-core machine.
 */
const START_TIMEOUT_MS = 20_000;

export interface StartedServer {
  child: ChildProcess;
  /** The base URL, once the process printed its whole start-up banner (`listening on` … `Try:`). */
  listening: Promise<string>;
  /** The exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  output(): { stdout: string; stderr: string };
}

/**
 * The environment of a server a test starts: the caller's, on a free
 * loopback port, with no Redis, OpenAI or tracing unless `env` sets them.
 */
export function serverEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    REDIS_URL: '',
    OPENAI_API_KEY: '',
    OPENAI_BASE_URL: '',
    LANGFUSE_PUBLIC_KEY: '',
    LANGFUSE_SECRET_KEY: '',
    OTEL_EXPORTER_OTLP_ENDPOINT: '',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
    ...env,
  };
}

/** A started server that its owner ends. */
export interface SpawnedServer extends StartedServer {
  /** SIGKILL unless it already exited, then waits for the exit (so that nothing outlives its owner). */
  kill(): Promise<void>;
}

/**
 * Starts `src/main.ts` with node --import tsx in {@link serverEnv}, and leaves ending it to the caller.
 */
export function spawnServer(
  env: Record<string, string>,
  { startTimeoutMs = START_TIMEOUT_MS }: { startTimeoutMs?: number } = {},
): SpawnedServer {
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
      () => reject(new Error(`server start-up took longer than ${startTimeoutMs} ms: ${stderr}`)),
      startTimeoutMs,
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
