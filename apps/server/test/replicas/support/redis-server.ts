import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

/** How long a redis-server may take to answer PING after it was spawned (it replays its AOF first). */
const START_TIMEOUT_MS = 10_000;
/** How long redis-server may take to exit after a signal. */
const EXIT_TIMEOUT_MS = 3_000;

/** A redis-server process of a test's own, see {@link startRedisServer}. */
export interface RedisServer {
  readonly port: number;
  readonly pid: number;
  /** `performance.now()` when the server first answered PING. */
  readonly readyAt: number;
  /** What the process printed so far, for failure messages. */
  output(): string;
  /** Sends `signal` (default SIGTERM) and waits for the process to exit (SIGKILL if it does not in time). */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

/** True when a redis-server on `port` answers PING with PONG (not with an error such as LOADING). */
export function answersPing(port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    const done = (answered: boolean) => {
      socket.destroy();
      resolve(answered);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

function exited(child: ChildProcessWithoutNullStreams, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * Starts `redis-server` on 127.0.0.1:`port` with its data in `dir`, every
 * write appended to the AOF and fsynced before it is answered (so that a
 * SIGKILL loses no acknowledged write), and no RDB snapshots. Starting it
 * again on the same `dir` replays that AOF. Resolves once it answers PING.
 * Should the test runner exit early, the server does not outlive it.
 */
export async function startRedisServer({ port, dir }: { port: number; dir: string }): Promise<RedisServer> {
  const child = spawn(
    'redis-server',
    [
      ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir],
      ...['--appendonly', 'yes', '--appendfsync', 'always', '--save', ''],
    ],
    { stdio: 'pipe' },
  );
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  child.once('exit', () => process.off('exit', kill));

  const deadline = performance.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `redis-server exited (${child.exitCode ?? child.signalCode}) before it answered:\n${output}`,
      );
    }
    if (await answersPing(port)) break;
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`redis-server did not answer PING within ${START_TIMEOUT_MS} ms:\n${output}`);
    }
    await delay(10);
  }
  const readyAt = performance.now();
  return {
    port,
    pid: child.pid as number,
    readyAt,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      child.kill(signal);
      if (!(await exited(child, EXIT_TIMEOUT_MS))) {
        child.kill('SIGKILL');
        await exited(child, EXIT_TIMEOUT_MS);
      }
    },
  };
}
