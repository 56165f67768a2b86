// The cost of a routing eval in process: 5,000 cases through runEval() with stubbed agents (a whole turn
// each: the user message stored, the first decision, the stub's reply, the answer, the case judged and
// scored) against 5,000 bare `orchestrator.decide()` calls of the same router on the same messages, in the
// same process, alternating, medians of the rounds. Target: the eval under 10× the bare calls. CPU time,
// not wall time: the machine is shared, and a neighbour's load stretches wall time of either side at random.
// Run compiled in a child process by bench/run.ts (the `eval` variant); it sends its results over IPC.
//   BENCH_EVAL_CASES (default 5000), BENCH_EVAL_ROUNDS (default 7)
import type { Conversation } from '@switchboard/core';
import { KeywordOrchestrator } from '@switchboard/orchestrators';
import { agentMeta, defineAgent } from '@switchboard/runtime';
import { type Dataset, runEval } from '@switchboard/runtime/eval';

/** CPU time (user + system) of both sides, per round, in milliseconds. */
export interface EvalCost {
  cases: number;
  bareMs: number[];
  evalMs: number[];
  accuracy: number;
}

const MESSAGES: readonly [string, string][] = [
  ["what's 15% of 80?", 'calculator'],
  ['what is 12 times 7', 'calculator'],
  ['what time is it in Tokyo?', 'clock'],
  ['how many days until Christmas?', 'clock'],
  ['convert 5 km to miles', 'converter'],
  ["what's 72 fahrenheit in celsius?", 'converter'],
  ['what can you do?', 'help'],
  ["what's the capital of France?", 'help'],
];

const agents = [
  ['clock', ['time', 'what time', 'date', 'day', 'today', 'days until']],
  ['converter', ['convert', 'km', 'miles', 'fahrenheit', 'celsius', 'kg', 'pounds']],
  ['calculator', ['calculate', 'plus', 'minus', 'times', 'percent', '%', '+', '*', '/']],
  ['help', ['help', 'what can you do', 'agents']],
].map(([name, keywords]) =>
  defineAgent({
    name: name as string,
    description: `The ${name} agent`,
    keywords: keywords as string[],
    run: () => 'x',
  }),
);

function dataset(cases: number): Dataset {
  return {
    name: 'bench',
    cases: Array.from({ length: cases }, (_, index) => {
      const [input, agent] = MESSAGES[index % MESSAGES.length] as [string, string];
      return { id: `case-${index}`, input, expect: { agent } };
    }),
  };
}

function conversations(cases: number, router: KeywordOrchestrator): Conversation[] {
  return Array.from({ length: cases }, (_, index) => {
    const [content] = MESSAGES[index % MESSAGES.length] as [string, string];
    const message = { id: `m${index}`, role: 'user' as const, content, createdAt: new Date(0).toISOString() };
    return {
      sessionId: `s${index}`,
      turnId: `t${index}`,
      messages: [message],
      turnStart: 0,
      hop: 0,
      agents: router.agents,
    };
  });
}

const cases = Number(process.env.BENCH_EVAL_CASES ?? 5_000);
const rounds = Number(process.env.BENCH_EVAL_ROUNDS ?? 7);
const router = new KeywordOrchestrator({
  name: 'keyword',
  agents: agents.map(agentMeta),
  fallbackAgent: 'help',
});
const data = dataset(cases);
const prepared = conversations(cases, router);
const result: EvalCost = { cases, bareMs: [], evalMs: [], accuracy: 0 };
// A first round of each warms the JIT; it is not counted.
for (let round = -1; round < rounds; round++) {
  const cpuMs = (since: NodeJS.CpuUsage) => {
    const { user, system } = process.cpuUsage(since);
    return (user + system) / 1000;
  };
  let started = process.cpuUsage();
  let routed = 0;
  for (const conversation of prepared) {
    const decision = await router.decide(conversation);
    if (!('error' in decision)) routed += 1;
  }
  const bare = cpuMs(started);
  if (routed !== cases) throw new Error(`only ${routed} of ${cases} bare decisions routed`);
  started = process.cpuUsage();
  const report = await runEval({ orchestrator: router, agents }, data, { stubAgents: true });
  const evaluated = cpuMs(started);
  result.accuracy = report.metrics.accuracy;
  if (round >= 0) {
    result.bareMs.push(bare);
    result.evalMs.push(evaluated);
  }
}
if (process.send) process.send({ result });
else console.log(result);
