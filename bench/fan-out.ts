// Wall time of a supervisor turn that fans out to three agents of 300 ms each, against the same turn with
// agents that answer at once (the model calls and the engine), in the same run, turns interleaved.
// The model is the scripted OpenAI-compatible server on loopback, through the real `openai` client.
// Run compiled in a child process by bench/run.ts (BENCH_VARIANTS=fanout), which prints the result;
// run alone (`pnpm tsx bench/fan-out.ts`) it prints it itself and exits with 1 when the bound is missed.
//   BENCH_FANOUT_RUNS (default 9)  measured turns of each kind, after 2 of each to warm up
import { setTimeout as sleep } from 'node:timers/promises';
import { SupervisorOrchestrator } from '@switchboard/orchestrators';
import { App, agentMeta, defineAgent } from '@switchboard/runtime';
import { createScriptedModelServer, type RecordedRequest } from '@switchboard/runtime/testing';
import OpenAI from 'openai';
import { type FanOutResult, printFanOut } from './fan-out-report.js';
import { median } from './load.js';

const AGENT_MS = 300;
const NAMES = ['flights', 'hotels', 'weather'];
const WARM_UP = 2;

/** The supervisor's model: three sub-goals when asked to decompose, an answer when asked to synthesise. */
function supervisorModel(request: RecordedRequest): string {
  const format = request.body.response_format;
  const decompose = format?.type === 'json_schema' && format.json_schema.name === 'supervisor_plan';
  return JSON.stringify({
    thought: '',
    subgoals: decompose ? NAMES.map((agent) => ({ agent, task: `${agent} for a weekend in Rome` })) : [],
    answer: decompose ? '' : 'Everything is booked.',
  });
}

/** Runs `runs` turns with agents of 0 ms and `runs` with agents of {@link AGENT_MS}, interleaved. */
async function measureFanOut(runs: number): Promise<FanOutResult> {
  const server = await createScriptedModelServer();
  let agentMs = 0;
  // Each turn's branch runs, as [start, end] times, to check that they overlapped.
  let spans: Array<[number, number]> = [];
  const agents = NAMES.map((name) =>
    defineAgent({
      name,
      description: `Finds ${name}`,
      run: async (message) => {
        const startedAt = performance.now();
        if (agentMs > 0) await sleep(agentMs);
        spans.push([startedAt, performance.now()]);
        return `${name}: done (${message})`;
      },
    }),
  );
  const app = new App({ name: 'bench-fan-out', agents, logger: () => {} });
  app.mount(
    new SupervisorOrchestrator({
      name: 'bench-fan-out',
      agents: agents.map(agentMeta),
      model: 'bench-model',
      client: new OpenAI({ apiKey: 'bench', baseURL: server.url, maxRetries: 0 }),
    }),
  );
  const baseline: number[] = [];
  const fanOut: number[] = [];
  let overlappingRuns = 0;
  const turn = async (index: number, ms: number) => {
    agentMs = ms;
    spans = [];
    server.push(supervisorModel, supervisorModel);
    const started = performance.now();
    const result = await app.chat({ sessionId: `fan-out-${index}`, message: 'Plan a weekend in Rome' });
    const wall = performance.now() - started;
    if (result.status !== 'completed' || spans.length !== NAMES.length)
      throw new Error(`turn ${index} did not fan out: ${result.status}, ${spans.length} branches ran`);
    const overlapping = Math.max(...spans.map(([start]) => start)) < Math.min(...spans.map(([, end]) => end));
    return { wall, overlapping };
  };
  try {
    for (let index = 0; index < WARM_UP; index++) {
      await turn(-1 - 2 * index, 0);
      await turn(-2 - 2 * index, AGENT_MS);
    }
    for (let index = 0; index < runs; index++) {
      baseline.push((await turn(2 * index, 0)).wall);
      const measured = await turn(2 * index + 1, AGENT_MS);
      fanOut.push(measured.wall);
      if (measured.overlapping) overlappingRuns++;
    }
    server.assertDone();
  } finally {
    await app.close();
    await server.close();
  }
  return {
    runs,
    branches: NAMES.length,
    agentMs: AGENT_MS,
    baselineMedianMs: median(baseline),
    fanOutMedianMs: median(fanOut),
    overlappingRuns,
  };
}

const result = await measureFanOut(Number(process.env.BENCH_FANOUT_RUNS ?? 9));
if (process.send) process.send({ result });
else if (!printFanOut(result)) process.exitCode = 1;
