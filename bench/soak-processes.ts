// The processes of `bench/replica-soak.ts`: a redis-server of its own and `apps/server` replicas, each on a free
// loopback port, every one of them ended when the soak ends, also on an error or Ctrl-C.
import { type ChildProcess, spawn } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { freePort } from '../apps/server/test/replicas/support/redis-server.js';
import { serverEnv } from '../apps/server/test/support/spawn-server.js';

/** The server entry the replicas run by default: this checkout's `apps/server`. */
export const SERVER_MAIN = fileURLToPath(new URL('../apps/server/src/main.ts', import.meta.url));
/** Failure guard: how long a replica or redis-server may take to answer (tsx compiles on start, on a busy machine). */
const START_TIMEOUT_MS = 30_000;
/** How long a replica may take to exit after SIGTERM before it is killed. */
const STOP_TIMEOUT_MS = 3_000;
/** How much of a process's output is kept for an error message. */
const OUTPUT_KEPT = 4_000;

/** A child process of the soak. */
export interface SoakProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** The last few KB it printed. */
  output(): string;
}

/** A started `apps/server` replica. */
export interface SoakReplica extends SoakProcess {
  readonly url: string;
}

const children: SoakProcess[] = [];

function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

function exited(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (!isRunning(child)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

function track(name: string, child: ChildProcess): SoakProcess {
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-OUTPUT_KEPT);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const tracked = { name, child, output: () => output };
  children.push(tracked);
  return tracked;
}

// Should the soak end early (an uncaught error, Ctrl-C), no child outlives it.
process.once('exit', () => {
  for (const { child } of children) if (isRunning(child)) child.kill('SIGKILL');
});
process.once('SIGINT', () => process.exit(130));

async function killChild(child: ChildProcess): Promise<void> {
  if (isRunning(child)) child.kill('SIGKILL');
  await exited(child, STOP_TIMEOUT_MS);
}

/** SIGKILLs one process and waits for its exit. */
export function kill({ child }: SoakProcess): Promise<void> {
  return killChild(child);
}

/** Stops processes still running: SIGTERM (a replica deletes its liveness key), SIGKILL after 3 s. */
export async function stop(processes: readonly SoakProcess[]): Promise<void> {
  await Promise.all(
    processes.map(async ({ child }) => {
      if (!isRunning(child)) return;
      child.kill('SIGTERM');
      if (!(await exited(child, STOP_TIMEOUT_MS))) await killChild(child);
    }),
  );
}

async function waitUntil(what: SoakProcess, ready: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + START_TIMEOUT_MS;
  while (!(await ready().catch(() => false))) {
    if (!isRunning(what.child)) throw new Error(`${what.name} exited before it was ready:\n${what.output()}`);
    if (performance.now() > deadline)
      throw new Error(`${what.name} was not ready within ${START_TIMEOUT_MS} ms:\n${what.output()}`);
    await delay(100);
  }
}

/**
 * Starts a redis-server of the soak's own on a free loopback port, without persistence, so that its
 * `INFO commandstats` counts only the replicas' commands. Resolves with its URL once it answers PING.
 */
export async function startRedis(): Promise<SoakProcess & { url: string }> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const started = track('redis-server', child);
  const url = `redis://127.0.0.1:${port}`;
  await waitUntil(started, async () => {
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    // Refused until it listens: the rejected connect() says so already.
    client.on('error', () => {});
    try {
      await client.connect();
      return (await client.ping()) === 'PONG';
    } finally {
      client.disconnect();
    }
  });
  return { ...started, url };
}

/**
 * Starts `apps/server` (node --import tsx src/main.ts, as `pnpm start` does; or another entry `main`, such
 * as an older checkout's) on a free loopback port with
 * `env` on top of a clean environment (no OpenAI, tracing or API keys), and resolves once `GET /readyz`
 * answers 200. Logs only warnings, so that request lines cost neither replica nor soak any time.
 */
export async function startReplica(
  name: string,
  env: Record<string, string>,
  main = SERVER_MAIN,
): Promise<SoakReplica> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', main], {
    env: serverEnv({ PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', CONSOLE: 'off', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = `http://127.0.0.1:${port}`;
  const started = track(name, child);
  await waitUntil(started, async () => {
    const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) });
    await response.body?.cancel();
    return response.status === 200;
  });
  return { ...started, url };
}
