// Starts the real server entry point (src/main.ts) as a child process, as a user runs it.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TurnResult } from '@switchboard/runtime';
import { afterEach } from 'vitest';

const main = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

/** How long a process may take to print its `listening on` line (tsx compiles on start). */
const START_TIMEOUT_MS = 8_000;
/** How long a process may take to exit after SIGTERM. */
const STOP_TIMEOUT_MS = 5_000;

export interface StartedServer {
  child: ChildProcess;
  /** The base URL, once the process printed its whole start-up banner (`listening on` … `Try:`). */
  listening: Promise<string>;
  /** The exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  output(): { stdout: string; stderr: string };
}

const children: StartedServer[] = [];

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
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

/**
 * Starts `src/main.ts` as `server-process.test.ts` does (node --import tsx,
 * PORT=0 on loopback), with no Redis, OpenAI or tracing from the caller's
 * environment unless `env` sets them.
 */
export function startServer(env: Record<string, string>): StartedServer {
  const child = spawn(process.execPath, ['--import', 'tsx', main], {
    env: serverEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const listening = withTimeout(
    new Promise<string>((resolve, reject) => {
      child.stdout?.on('data', () => {
        // The tracing line is logged after the listening line: wait for the banner's last line (JSON, not a TTY).
        const match = /listening on (http:\/\/[^\s"]+)/.exec(stdout);
        if (match && /"msg":"Try: /.test(stdout)) resolve(match[1]!);
      });
      void exited.then((code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
    }),
    START_TIMEOUT_MS,
    'server start-up',
  );
  listening.catch(() => {}); // awaited by the tests that need it
  const server = { child, listening, exited, output: () => ({ stdout, stderr }) };
  children.push(server);
  return server;
}

/** SIGTERM, then the exit code (the graceful path a user's `docker stop` or Ctrl-C takes). */
export async function stop(server: StartedServer): Promise<number | null> {
  server.child.kill('SIGTERM');
  return withTimeout(server.exited, STOP_TIMEOUT_MS, 'exit after SIGTERM');
}

afterEach(async () => {
  // Killed and waited for, so that no process still writes (e.g. Redis keys) once a test ended.
  await Promise.all(
    children.splice(0).map(async (server) => {
      if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
      await server.exited;
    }),
  );
});

/** `POST /v1/chat` to a started server. */
export async function chat(url: string, message: string, sessionId?: string) {
  const response = await fetch(`${url}/v1/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(sessionId === undefined ? { message } : { message, sessionId }),
    signal: AbortSignal.timeout(5_000),
  });
  return { status: response.status, body: (await response.json()) as TurnResult };
}
