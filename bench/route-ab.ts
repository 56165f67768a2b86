// Two or more HTTP bench servers side by side: all started at once, then driven in turn, one block of the
// bench's load at a time, round after round, so that a noisy stretch of a shared machine hits every server
// alike. Prints each one's median requests/s and server CPU per request, and the median of the per-round
// ratios of each to the last one named.
//   pnpm tsx bench/route-ab.ts [rounds=10] [seconds per block=1] servers/switchboard.ts servers/hono-chat.ts
// A script may carry env settings after a `?`: `servers/switchboard.ts?BENCH_LOGGER=default`.
import { fork } from 'node:child_process';
import { compileServer } from './compile.js';
import { median, runLoad } from './load.js';

const [roundsArgument = '10', secondsArgument = '1', ...scripts] = process.argv.slice(2);
type CpuReport = { cpu: NodeJS.CpuUsage; memory: number };
const servers = await Promise.all(
  scripts.map(async (name) => {
    const [script = '', query = ''] = name.split('?');
    const child = fork(await compileServer(script), {
      env: { ...process.env, ...Object.fromEntries(new URLSearchParams(query)), NODE_ENV: 'production' },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const url = await new Promise<string>((resolve) =>
      child.once('message', (message: { ready: string }) => resolve(message.ready)),
    );
    const probe = () =>
      new Promise<CpuReport>((resolve) => {
        child.once('message', (message: CpuReport) => resolve(message));
        child.send('cpu');
      });
    return { name, child, url, probe, rates: [] as number[], cpu: [] as number[], sys: [] as number[] };
  }),
);
const body = (index: number) =>
  JSON.stringify({ message: `echo request ${index}`, sessionId: `bench-${index % 256}` });
const block = async (server: (typeof servers)[number], seconds: number) => {
  const before = await server.probe();
  const result = await runLoad({
    url: `${server.url}/v1/chat`,
    concurrency: 32,
    seconds,
    maxRequests: 2_000_000,
    body,
  });
  const after = await server.probe();
  const micros = after.cpu.user - before.cpu.user + after.cpu.system - before.cpu.system;
  const sys = after.cpu.system - before.cpu.system;
  return { rate: result.requestsPerSecond, cpu: micros / result.requests, sys: sys / result.requests };
};
for (const server of servers) await block(server, 2);
const rounds = Number(roundsArgument);
for (let round = 0; round < rounds; round++) {
  // Each round in another order, so that no server always follows the same one.
  const order = round % 2 ? [...servers].reverse() : servers;
  for (const server of order) {
    const { rate, cpu, sys } = await block(server, Number(secondsArgument));
    server.rates.push(rate);
    server.cpu.push(cpu);
    server.sys.push(sys);
  }
}
const last = servers.at(-1)!;
for (const server of servers) {
  const ratios = server.rates.map((rate, index) => rate / last.rates[index]!);
  const cpuRatios = server.cpu.map((cpu, index) => last.cpu[index]! / cpu);
  console.log(
    `${server.name.padEnd(44)} ${median(server.rates).toFixed(0).padStart(6)} req/s  ${median(server.cpu).toFixed(1).padStart(6)} cpu µs/req (sys ${median(server.sys).toFixed(1)})` +
      `  req/s ratio ${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})` +
      `  cpu ratio ${median(cpuRatios).toFixed(2)} (${Math.min(...cpuRatios).toFixed(2)}–${Math.max(...cpuRatios).toFixed(2)})`,
  );
  server.child.kill('SIGTERM');
}
