// In-process cost of one turn, without HTTP: Switchboard's turn engine against a hand-written turn that does
// the same work (keep the history, route on a keyword, call the agent, record the answer), in the same run.
// This is the framework overhead that competing frameworks are compared on (CPU per turn with a mock model).
// Run compiled in a child process by bench/run.ts (`--expose-gc`); it sends its results over IPC.
import {
  type Conversation,
  currentUserMessage,
  latestToolResults,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import { KeywordOrchestrator } from '@switchboard/orchestrators';
import { App, defineAgent } from '@switchboard/runtime';

/** CPU and wall time per turn of one in-process variant. */
interface TurnCost {
  name: string;
  turns: number;
  cpuMicrosPerTurn: number;
  wallMicrosPerTurn: number;
  /** Heap still in use per turn after the run (history kept by the store), in bytes. */
  retainedBytesPerTurn: number;
}

const SESSIONS = 256;
const message = (index: number) => `echo request ${index}`;
const sessionOf = (index: number) => `bench-${index % SESSIONS}`;

interface HandMessage {
  id: string;
  role: 'user' | 'tool' | 'assistant';
  content: string;
  createdAt: string;
}

/** The baseline: what a developer would write by hand for the same turn, with no framework. */
function handWrittenTurn(): (index: number) => Promise<string> {
  const sessions = new Map<string, HandMessage[]>();
  const agents = new Map([
    ['echo', (text: string) => text],
    ['other', () => 'other'],
  ]);
  let counter = 0;
  return async (index) => {
    const sessionId = sessionOf(index);
    const history = sessions.get(sessionId) ?? [];
    sessions.set(sessionId, history);
    const content = message(index);
    history.push({ id: `m${counter++}`, role: 'user', content, createdAt: new Date().toISOString() });
    const agent = /\becho\b/i.test(content) ? 'echo' : 'other';
    const reply = await agents.get(agent)!(content);
    history.push({ id: `m${counter++}`, role: 'tool', content: reply, createdAt: new Date().toISOString() });
    history.push({
      id: `m${counter++}`,
      role: 'assistant',
      content: reply,
      createdAt: new Date().toISOString(),
    });
    return reply;
  };
}

function switchboardApp(orchestrator: 'keyword' | 'minimal'): App {
  const echo = defineAgent({ name: 'echo', description: 'Repeats', keywords: ['echo'], run: (text) => text });
  const other = defineAgent({
    name: 'other',
    description: 'Never chosen',
    keywords: ['other'],
    run: () => 'o',
  });
  const app = new App({ name: 'bench', agents: [echo, other], logger: () => {} });
  if (orchestrator === 'keyword')
    return app.mount(new KeywordOrchestrator({ name: 'bench', agents: app.agentMetas }));
  // The smallest orchestrator: the engine's own cost, without keyword matching.
  return app.mount({
    name: 'minimal',
    agents: app.agentMetas,
    async decide(conversation: Conversation) {
      const [reply] = latestToolResults(conversation);
      return reply ? routeToUser(reply.content) : toolCall('echo', currentUserMessage(conversation).content);
    },
  });
}

async function measureTurns(name: string, turn: (index: number) => Promise<unknown>, turns: number) {
  for (let index = 0; index < 5_000; index++) await turn(index);
  globalThis.gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  for (let index = 0; index < turns; index++) await turn(index);
  const wall = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  globalThis.gc?.();
  return {
    name,
    turns,
    cpuMicrosPerTurn: (cpu.user + cpu.system) / turns,
    wallMicrosPerTurn: (wall * 1000) / turns,
    retainedBytesPerTurn: (process.memoryUsage().heapUsed - heapBefore) / turns,
  };
}

/**
 * Runs the hand-written baseline, then Switchboard with a minimal and with
 * the keyword orchestrator, each for `turns` sequential turns over 256
 * sessions. Retained bytes are exact only when the process runs with `--expose-gc`.
 */
async function measureTurnOverhead(turns = 50_000): Promise<TurnCost[]> {
  const results: TurnCost[] = [await measureTurns('hand-written', handWrittenTurn(), turns)];
  for (const orchestrator of ['minimal', 'keyword'] as const) {
    const app = switchboardApp(orchestrator);
    const chat = (index: number) => app.chat({ message: message(index), sessionId: sessionOf(index) });
    results.push(await measureTurns(`switchboard ${orchestrator}`, chat, turns));
    await app.close();
  }
  return results;
}

const turns = Number(process.env.BENCH_TURNS ?? 50_000);
const results = await measureTurnOverhead(turns);
if (process.send) process.send({ results });
else console.table(results);
