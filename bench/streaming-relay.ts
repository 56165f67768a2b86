// The stream-relay variant of `pnpm bench` (BENCH_VARIANTS=streamrelay): a scripted model streams STREAM_DELTAS
// deltas (default 200) after a 50 ms first-token delay; an llmAgent's turn relays them to SSE clients of /v1/chat
// and /v1/chat/completions, and a bare Hono route relays the same stream with the `openai` client as the baseline.
// Loopback only, bounded in time: each round forks fresh relays and measures, for each relay in turn,
//   - the first delta at the client minus the model's own (sequential turns, each after one straight to the model),
//   - the relay process's CPU per relayed delta (process.cpuUsage around BENCH_SECONDS of turns, 8 at a time),
//   - the writes a turn took: socket writes in the relay, body pieces (reads) at the client.
import { type ChildProcess, fork } from 'node:child_process';
import { Agent } from 'node:http';
import { compileServer } from './compile.js';
import type { FirstHop } from './first-hop.js';
import { median } from './load.js';
import { nodeFlags, runChild } from './run-child.js';
import type { RelayTiming } from './servers/relay-timing.js';
import {
  completionDelta,
  type DeltaTest,
  eventDelta,
  type StreamedTurn,
  streamTurn,
} from './streaming-relay-client.js';
import { recordTarget } from './summary.js';

const DELTAS = Number(process.env.STREAM_DELTAS ?? 200);
const FIRST_TURNS = 30;
const CONCURRENCY = 8;

interface Relay {
  name: 'hono' | 'chat' | 'completions';
  server: 'hono' | 'switchboard';
  path: string;
  body: string;
  isDelta: DeltaTest;
}

const RELAYS: Relay[] = [
  {
    name: 'hono',
    server: 'hono',
    path: '/v1/chat',
    body: JSON.stringify({ message: 'write something' }),
    isDelta: eventDelta('delta'),
  },
  {
    name: 'chat',
    server: 'switchboard',
    path: '/v1/chat',
    body: JSON.stringify({ message: 'write something', stream: true }),
    isDelta: eventDelta('agent-delta'),
  },
  {
    name: 'completions',
    server: 'switchboard',
    path: '/v1/chat/completions',
    body: JSON.stringify({
      model: 'bench',
      messages: [{ role: 'user', content: 'write something' }],
      stream: true,
    }),
    isDelta: completionDelta,
  },
];

/** One relay's measurements in one round. */
export interface RelayRound {
  /** Median first delta at the client minus the median of the model's own, in ms. */
  addedFirstDeltaMs: number;
  /** Inside the relay, median ms from the request to asking the model (see `RelayTiming`). */
  toModelMs: number;
  /** Inside the relay, median ms from the model's answer to the first write after it. */
  toFirstWriteMs: number;
  /** The least first delta at the client minus the model's least, in ms: the floor, what the load of the machine hides least. */
  addedFloorMs: number;
  cpuMicrosPerDelta: number;
  socketWritesPerTurn: number;
  responseWritesPerTurn: number;
  clientReadsPerTurn: number;
  /** The model's own stream: the socket writes it sent a turn's deltas in. */
  modelWritesPerTurn: number;
  turns: number;
  errors: number;
}

type Probe = {
  cpu: NodeJS.CpuUsage;
  writes: { responseWrites: number; socketWrites: number };
  timing?: RelayTiming;
};

async function start(
  script: string,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string }> {
  // BENCH_CPU_PROF=<dir>: the relays write V8 CPU profiles there (bench/profile-summary.ts reads them).
  const profile = process.env.BENCH_CPU_PROF && !script.includes('model');
  const child = fork(await compileServer(script), {
    execArgv: [
      ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
      ...nodeFlags(),
    ],
    env: { ...process.env, ...env, NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (message: { ready?: string }) =>
      message.ready ? resolve(message.ready) : reject(new Error('bad message')),
    );
    child.once('exit', (code) => reject(new Error(`${script} exited with code ${code}`)));
  });
  return { child, url };
}

const probe = (child: ChildProcess) =>
  new Promise<Probe>((resolve) => {
    child.once('message', (message: Probe) => resolve(message));
    child.send('cpu');
  });

const good = (turn: StreamedTurn) => turn.ok && turn.deltas === DELTAS;

async function measureRelay(
  relay: Relay,
  { child, url }: { child: ChildProcess; url: string },
  modelServer: { child: ChildProcess; url: string },
  seconds: number,
): Promise<RelayRound> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const target = new URL(relay.path, url);
  const model = new URL(`${modelServer.url}/chat/completions`);
  const modelBody = JSON.stringify({
    model: 'bench-model',
    messages: [{ role: 'user', content: 'write something' }],
    stream: true,
  });
  let errors = 0;
  const turn = async (to: URL, body: string, isDelta: DeltaTest) => {
    const streamed = await streamTurn(to, body, isDelta, agent);
    if (!good(streamed)) errors++;
    return streamed;
  };
  const many = async (count: number, deadline = Number.POSITIVE_INFINITY) => {
    const turns: StreamedTurn[] = [];
    const worker = async () => {
      while (turns.length < count && performance.now() < deadline)
        turns.push(await turn(target, relay.body, relay.isDelta));
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    return turns;
  };
  try {
    // Warm, as a server that has been serving is: as long as the CPU phase, unmeasured. (The 32 turns that warmed
    // it before left most of the code still cold: the bare Hono relay then added 7.8 ms to a first delta.)
    await many(100_000, performance.now() + seconds * 1000);
    // The first delta, one turn at a time, each right after one straight to the model (the same conditions).
    await probe(child);
    const own: StreamedTurn[] = [];
    const relayed: StreamedTurn[] = [];
    for (let index = 0; index < FIRST_TURNS; index++) {
      own.push(await turn(model, modelBody, completionDelta));
      relayed.push(await turn(target, relay.body, relay.isDelta));
    }
    const before = await probe(child);
    const timing = before.timing ?? { toModelMs: [], toFirstWriteMs: [] };
    const modelBefore = await probe(modelServer.child);
    const measured = await many(100_000, performance.now() + seconds * 1000);
    const after = await probe(child);
    const modelAfter = await probe(modelServer.child);
    const deltas = measured.reduce((sum, streamed) => sum + streamed.deltas, 0);
    const cpu = after.cpu.user - before.cpu.user + (after.cpu.system - before.cpu.system);
    const per = (value: number) => value / measured.length;
    return {
      addedFirstDeltaMs:
        median(relayed.map((streamed) => streamed.firstDeltaMs)) -
        median(own.map((streamed) => streamed.firstDeltaMs)),
      addedFloorMs:
        Math.min(...relayed.map((streamed) => streamed.firstDeltaMs)) -
        Math.min(...own.map((streamed) => streamed.firstDeltaMs)),
      toModelMs: median(timing.toModelMs),
      toFirstWriteMs: median(timing.toFirstWriteMs),
      cpuMicrosPerDelta: cpu / deltas,
      socketWritesPerTurn: per(after.writes.socketWrites - before.writes.socketWrites),
      responseWritesPerTurn: per(after.writes.responseWrites - before.writes.responseWrites),
      clientReadsPerTurn: per(measured.reduce((sum, streamed) => sum + streamed.reads, 0)),
      modelWritesPerTurn: per(modelAfter.writes.socketWrites - modelBefore.writes.socketWrites),
      turns: measured.length,
      errors,
    };
  } finally {
    agent.destroy();
  }
}

/** Runs the variant's rounds and prints each measurement with its target. */
export async function runStreamRelayBench({
  seconds,
  rounds,
}: {
  seconds: number;
  rounds: number;
}): Promise<boolean> {
  const model = await start('servers/stream-model.ts', { STREAM_DELTAS: String(DELTAS) });
  const runs = new Map<Relay['name'], RelayRound[]>();
  try {
    for (let round = 0; round < rounds; round++) {
      const servers = {
        hono: await start('servers/stream-hono.ts', { STREAM_MODEL_URL: model.url }),
        switchboard: await start('servers/stream-switchboard.ts', { STREAM_MODEL_URL: model.url }),
      };
      try {
        for (const relay of RELAYS) {
          const measured = await measureRelay(relay, servers[relay.server], model, seconds);
          runs.set(relay.name, [...(runs.get(relay.name) ?? []), measured]);
        }
      } finally {
        // SIGINT: the relays exit on their own, writing their CPU profiles when asked for.
        servers.hono.child.kill('SIGINT');
        servers.switchboard.child.kill('SIGINT');
      }
    }
  } finally {
    model.child.kill('SIGTERM');
  }
  const firstHop = await runChild<FirstHop>('first-hop.ts', 'result');
  return printStreamRelay(runs, { seconds, rounds }, firstHop);
}

const fmt = (n: number | undefined, digits = 1) =>
  n === undefined || Number.isNaN(n) ? '-' : n.toFixed(digits);

function printStreamRelay(
  runs: Map<Relay['name'], RelayRound[]>,
  { seconds, rounds }: { seconds: number; rounds: number },
  firstHop: FirstHop,
) {
  console.log(
    `\nStreaming relay: ${DELTAS} deltas after a 50 ms first token, scripted model → relay → SSE client (loopback), ${CONCURRENCY} turns at a time for ${seconds}s, medians of ${rounds} rounds\n`,
  );
  console.log(
    'relay        +first delta ms  (floor)  cpu µs/delta  res.write/turn  socket writes/turn  client reads/turn  model writes/turn  turns  errors',
  );
  const of = (name: Relay['name'], field: keyof RelayRound) => {
    const values = (runs.get(name) ?? []).map((run) => run[field]);
    return values.length > 0 ? median(values) : undefined;
  };
  for (const { name } of RELAYS) {
    console.log(
      `${name.padEnd(12)} ${fmt(of(name, 'addedFirstDeltaMs'), 2).padStart(15)}  ${fmt(of(name, 'addedFloorMs'), 2).padStart(7)}  ${fmt(of(name, 'cpuMicrosPerDelta'), 2).padStart(12)}  ${fmt(of(name, 'responseWritesPerTurn')).padStart(14)}  ${fmt(of(name, 'socketWritesPerTurn')).padStart(18)}  ${fmt(of(name, 'clientReadsPerTurn')).padStart(17)}  ${fmt(of(name, 'modelWritesPerTurn')).padStart(17)}  ${fmt(of(name, 'turns'), 0).padStart(5)}  ${String((runs.get(name) ?? []).reduce((sum, run) => sum + run.errors, 0)).padStart(6)}`,
    );
  }
  console.log('');
  let met = true;
  const verdict = (label: string, value: number | undefined, bound: number, note: string, unit: string) => {
    const pass = value !== undefined && value <= bound;
    met &&= pass;
    recordTarget({
      label: `stream relay ${label}`,
      value,
      bound,
      kind: 'max',
      unit,
      note,
    });
    console.log(
      `${value === undefined ? 'n/a ' : pass ? 'PASS' : 'MISS'}  ${label.padEnd(44)} ${fmt(value, 2).padStart(7)}  (target ≤ ${bound}; ${note})`,
    );
  };
  const hono = runs.get('hono') ?? [];
  for (const name of ['chat', 'completions'] as const) {
    const route = name === 'chat' ? '/v1/chat' : '/v1/chat/completions';
    const each = runs.get(name) ?? [];
    verdict(
      `${route}: ms added to the first delta`,
      of(name, 'addedFirstDeltaMs'),
      2,
      `median of ${FIRST_TURNS} turns, rounds ${each.map((run) => fmt(run.addedFirstDeltaMs, 2)).join(', ')}; floor ${each.map((run) => fmt(run.addedFloorMs, 2)).join(', ')}`,
      ' ms',
    );
    const ratios = each
      .slice(0, hono.length)
      .map((run, round) => run.cpuMicrosPerDelta / (hono[round] as RelayRound).cpuMicrosPerDelta);
    verdict(
      `${route}: cpu per delta ÷ bare Hono relay`,
      ratios.length > 0 ? median(ratios) : undefined,
      3,
      `rounds ${ratios.map((ratio) => fmt(ratio, 2)).join(', ')}`,
      '×',
    );
    // The model sends a turn's deltas in a few socket writes; deltas that reach the relay together cannot be told
    // apart downstream, so a turn should take no more writes (HTTP chunks, each a piece the client's parser hands
    // on) than that, plus one for the opening events sent before the model answers and one for the first delta,
    // sent ahead of the rest of its read; the closing events share the last write.
    const model = of(name, 'modelWritesPerTurn');
    verdict(
      `${route}: writes (HTTP chunks) per turn`,
      of(name, 'responseWritesPerTurn'),
      model === undefined ? 0 : Math.round(model) + 2,
      `the model sent its ${DELTAS} deltas in ${fmt(model)} socket writes, + 2: the opening events and the first delta ahead of the rest`,
      '',
    );
  }
  console.log(
    `info  inside each relay, one turn at a time: request → model asked ${RELAYS.map(({ name }) => `${name} ${fmt(of(name, 'toModelMs'), 2)}`).join(', ')} ms; model's answer → first write ${RELAYS.map(({ name }) => `${name} ${fmt(of(name, 'toFirstWriteMs'), 2)}`).join(', ')} ms (medians); the rest of the added time is the relay process being woken twice`,
  );
  const chat = of('chat', 'addedFirstDeltaMs');
  const bare = of('hono', 'addedFirstDeltaMs');
  console.log(
    `info  the bare Hono relay adds ${fmt(bare, 2)} ms to the first delta (rounds ${hono.map((run) => fmt(run.addedFirstDeltaMs, 2)).join(', ')}); /v1/chat adds ${fmt(chat !== undefined && bare !== undefined ? chat - bare : undefined, 2)} ms more`,
  );
  console.log(
    `info  in one process (bench/first-hop.ts), request → model asked: the openai client alone ${fmt(firstHop.direct, 3)} ms, app.chat ${fmt(firstHop.chat, 3)}, POST /v1/chat ${fmt(firstHop.json, 3)}, streamed ${fmt(firstHop.sse, 3)} ms (medians): Switchboard's own part of a first delta is ${fmt(firstHop.sse - firstHop.direct, 3)} ms`,
  );
  console.log(
    `info  the same after 50 ms idle, as a relay is while the model thinks: the openai client alone ${fmt(firstHop.idle.direct, 3)} ms, streamed ${fmt(firstHop.idle.sse, 3)} ms: Switchboard's own part ${fmt(firstHop.idle.sse - firstHop.idle.direct, 3)} ms (a machine whose caches went cold in the wait)`,
  );
  return met;
}
