import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cluster } from 'ioredis';

const run = promisify(execFile);

/** A three-node Redis Cluster of the test's own, on loopback. */
export interface TestCluster {
  /** The nodes, as `createRedisStores` takes them. */
  readonly nodes: ReadonlyArray<{ host: string; port: number }>;
  /** An admin client (for inspecting keys). */
  readonly admin: Cluster;
  stop(): Promise<void>;
}

/** A free loopback port whose cluster bus port (port + 10000) is free too. */
async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    if (port > 0 && port + 10_000 < 65_536) {
      const busFree = await new Promise<boolean>((resolve) => {
        const server = createServer();
        server.once('error', () => resolve(false));
        server.listen(port + 10_000, '127.0.0.1', () => server.close(() => resolve(true)));
      });
      if (busFree) return port;
    }
  }
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * A `redis-server` of the test's own, on a free loopback port (for what must
 * not disturb the shared one), with `settings` such as `['--maxmemory', '4mb']`.
 */
export async function startOwnRedis(
  settings: readonly string[] = [],
): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...settings],
    {
      stdio: 'ignore',
    },
  );
  child.once('error', () => {});
  await waitFor(
    async () => (await run('redis-cli', ['-p', String(port), 'ping'])).stdout.trim() === 'PONG',
    `redis-server on port ${port} (is redis-server on the PATH?)`,
  );
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      child.kill('SIGKILL');
      if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

/**
 * Starts three `redis-server` processes with cluster mode on, joins them
 * into one cluster (all 16 384 slots, no replicas) with `redis-cli --cluster
 * create`, and waits until every node says `cluster_state:ok`. Fails with a
 * clear message when `redis-server` or `redis-cli` is missing.
 */
export async function startTestCluster(): Promise<TestCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-cluster-'));
  const processes: ChildProcess[] = [];
  const ports: number[] = [];
  const stop = async () => {
    for (const child of processes) child.kill('SIGKILL');
    await Promise.all(
      processes.map((child) =>
        child.exitCode === null ? new Promise((resolve) => child.once('exit', resolve)) : undefined,
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let index = 0; index < 3; index++) {
      const port = await freePort();
      ports.push(port);
      const child = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(dir, `nodes-${port}.conf`),
          '--dir',
          dir,
          '--save',
          '',
          '--appendonly',
          'no',
        ],
        { stdio: 'ignore' },
      );
      child.once('error', () => {});
      processes.push(child);
    }
    for (const port of ports) {
      await waitFor(
        async () => (await run('redis-cli', ['-p', String(port), 'ping'])).stdout.trim() === 'PONG',
        `redis-server on port ${port} (is redis-server on the PATH?)`,
      );
    }
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((port) => `127.0.0.1:${port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    for (const port of ports) {
      await waitFor(
        async () =>
          (await run('redis-cli', ['-p', String(port), 'cluster', 'info'])).stdout.includes(
            'cluster_state:ok',
          ),
        `the cluster to be ready on port ${port}`,
      );
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const nodes = ports.map((port) => ({ host: '127.0.0.1', port }));
  const admin = new Cluster(nodes, { lazyConnect: true });
  await admin.connect();
  return {
    nodes,
    admin,
    async stop() {
      admin.disconnect();
      await stop();
    },
  };
}
