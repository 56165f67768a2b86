// Starts the real server entry point (src/main.ts) as a child process, as a user runs it.
import type { TurnResult } from '@switchboard/runtime';
import { afterEach } from 'vitest';
import { type StartedServer, spawnServer } from './spawn-server.js';

export type { StartedServer };

/** How long a process may take to exit after SIGTERM. */
const STOP_TIMEOUT_MS = 5_000;

const children: StartedServer[] = [];

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Starts `src/main.ts` (see `spawnServer`), killed after the test that
 * started it.
 */
export function startServer(env: Record<string, string>): StartedServer {
  const server = spawnServer(env);
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
