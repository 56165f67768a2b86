// The churn bench over HTTP: the load generator of bench/load.ts against Switchboard on the churn workload,
// the hand-written baseline behind Hono, and the bare Hono endpoint, each in its own compiled server process,
// in the same run. The servers take turns in one-second rounds (rotating the order), so that a noisy
// neighbour on a shared machine hits all three alike; percentiles are over every request of every round.
// Each connection opens a new session every 3 requests (its own, so that no two requests wait on one
// session's lease: a user sends the next message after the answer).
import { type ChildProcess, fork } from 'node:child_process';
import { churnMessage, TURNS_PER_SESSION } from './churn-workload.js';
import { compileServer } from './compile.js';
import { type LoadResult, percentile, runLoad } from './load.js';
import { nodeFlags } from './run-child.js';

/** One server's numbers under churn. */
export interface ChurnHttpResult {
  name: string;
  requests: number;
  errors: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  cpuMicrosPerRequest: number;
  rssMb: number;
}

const SERVERS = [
  { name: 'hono', script: 'servers/bare-hono.ts' },
  { name: 'baseline', script: 'servers/churn-baseline.ts' },
  { name: 'switchboard', script: 'servers/churn-switchboard.ts' },
];

type CpuReport = { cpu: NodeJS.CpuUsage; memory: number };

/** A body maker for one load run: per connection, a new session id every {@link TURNS_PER_SESSION} requests. */
function churnBodies(run: string, concurrency: number): (index: number, worker: number) => string {
  const sent = new Uint32Array(concurrency);
  return (index, worker) => {
    const turn = sent[worker]!++;
    const sessionId = `${run}-${worker}-${Math.floor(turn / TURNS_PER_SESSION)}`;
    return JSON.stringify({ message: churnMessage(index), sessionId });
  };
}

async function startServer(name: string, script: string): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(await compileServer(script), {
    execArgv: nodeFlags(),
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (message: { ready?: string }) =>
      message.ready ? resolve(message.ready) : reject(new Error('bad message')),
    );
    child.once('exit', (code) => reject(new Error(`${name} server exited with code ${code}`)));
  });
  return { child, url: `${url}/v1/chat` };
}

const probe = (child: ChildProcess) =>
  new Promise<CpuReport>((resolve) => {
    child.once('message', (message: CpuReport) => resolve(message));
    child.send('cpu');
  });

/** Runs `seconds` one-second rounds of load against each churn server, after a second of warm-up each. */
export async function measureChurnHttp({
  seconds,
  concurrency,
}: {
  seconds: number;
  concurrency: number;
}): Promise<ChurnHttpResult[]> {
  const servers = await Promise.all(
    SERVERS.map(async ({ name, script }) => ({ name, ...(await startServer(name, script)) })),
  );
  try {
    const rounds = servers.map(() => [] as LoadResult[]);
    const cpuMicros = servers.map(() => 0);
    const rssBytes = servers.map(() => 0);
    const load = (url: string, run: string) =>
      runLoad({ url, concurrency, seconds: 1, maxRequests: 500_000, body: churnBodies(run, concurrency) });
    for (const server of servers) await load(server.url, 'warm');
    for (let round = 0; round < seconds; round++) {
      for (let offset = 0; offset < servers.length; offset++) {
        const index = (round + offset) % servers.length;
        const server = servers[index]!;
        const before = await probe(server.child);
        rounds[index]!.push(await load(server.url, `r${round}`));
        const after = await probe(server.child);
        cpuMicros[index]! += after.cpu.user - before.cpu.user + (after.cpu.system - before.cpu.system);
        rssBytes[index] = after.memory;
      }
    }
    return servers.map(({ name }, index) => {
      const results = rounds[index]!;
      const requests = results.reduce((sum, r) => sum + r.requests, 0);
      const elapsed = results.reduce((sum, r) => sum + r.seconds, 0);
      const latencies = Float64Array.from(results.flatMap((r) => [...r.sortedLatenciesMs])).sort();
      return {
        name,
        requests,
        errors: results.reduce((sum, r) => sum + r.errors, 0),
        requestsPerSecond: requests / elapsed,
        p50Ms: percentile(latencies, 50),
        p99Ms: percentile(latencies, 99),
        cpuMicrosPerRequest: cpuMicros[index]! / requests,
        rssMb: rssBytes[index]! / 1e6,
      };
    });
  } finally {
    for (const { child } of servers) child.kill('SIGTERM');
  }
}
