// A CPU profile of one HTTP bench server under the bench's load: the server (bench/servers/<name>.ts) is
// compiled and run with `--cpu-prof`, driven as `pnpm bench` drives it (1 s warm-up, then the measured
// seconds), stopped; prints the command that summarises its profile (bench/profile-summary.ts).
//   pnpm tsx bench/route-profile.ts <server script, e.g. servers/switchboard.ts> [seconds=5]
// BENCH_PROFILE_DIR keeps the .cpuprofile files there (default: a temporary folder).
import { fork } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileServer } from './compile.js';
import { runLoad } from './load.js';

const [script = 'servers/switchboard.ts', secondsArgument = '5'] = process.argv.slice(2);
const dir = process.env.BENCH_PROFILE_DIR ?? mkdtempSync(join(tmpdir(), 'route-profile-'));
const child = fork(await compileServer(script), {
  execArgv: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
  env: { ...process.env, NODE_ENV: 'production' },
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
const url = await new Promise<string>((resolve) =>
  child.once('message', (message: { ready: string }) => resolve(message.ready)),
);
const body = (index: number) =>
  JSON.stringify({ message: `echo request ${index}`, sessionId: `bench-${index % 256}` });
const warm = await runLoad({
  url: `${url}/v1/chat`,
  concurrency: 32,
  seconds: 1,
  maxRequests: 200_000,
  body,
});
const measured = await runLoad({
  url: `${url}/v1/chat`,
  concurrency: 32,
  seconds: Number(secondsArgument),
  maxRequests: 2_000_000,
  body,
});
const exited = new Promise((resolve) => child.once('exit', resolve));
child.kill('SIGINT');
await exited;
const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
if (!file) throw new Error(`no profile in ${dir}`);
console.log(
  `${script}: ${measured.requestsPerSecond.toFixed(0)} req/s, ${measured.requests} measured requests`,
);
// The profile covers the warm-up too.
console.log(`pnpm tsx bench/profile-summary.ts ${join(dir, file)} ${warm.requests + measured.requests}`);
