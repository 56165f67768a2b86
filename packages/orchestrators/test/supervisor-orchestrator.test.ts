import { setTimeout as sleep } from 'node:timers/promises';
import { type AgentMeta, ConfigurationError } from '@switchboard/core';
import { type Agent, defineAgent } from '@switchboard/runtime';
import {
  createScriptedModelServer,
  type RecordedRequest,
  runConversation,
  type ScriptEntry,
  type ScriptedReply,
} from '@switchboard/runtime/testing';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { SupervisorOrchestrator, type SupervisorOrchestratorOptions } from '../src/index.js';
import { describeRouterContract, type RoutingExample } from './router-contract.js';

const SECRET = 'ECONNREFUSED 10.0.0.7:5432 at Pool.connect (/srv/app/db.js:12:7)';
const REQUEST = 'Plan a weekend in Rome: flights, a hotel and the weather.';

type Goals = Record<string, string>;

function plan(subgoals: Goals, answer = ''): ScriptedReply {
  return {
    content: JSON.stringify({
      thought: 'split',
      subgoals: Object.entries(subgoals).map(([agent, task]) => ({ agent, task })),
      answer,
    }),
    usage: { inputTokens: 50, outputTokens: 10 },
  };
}

/** Agents answering `<name>: <task>` (or failing when listed in `failing`), recording their run times. */
function travelAgents(events: string[] = [], failing: readonly string[] = []): Agent[] {
  return ['flights', 'hotels', 'weather'].map((name) =>
    defineAgent({
      name,
      description: `Finds ${name}`,
      run: async (message) => {
        events.push(`start ${name}`);
        await sleep(20);
        events.push(`end ${name}`);
        if (failing.includes(name)) throw new Error(SECRET);
        return `${name} result for: ${message}`;
      },
    }),
  );
}

function systemOf(request: RecordedRequest | undefined): string {
  return String(request?.body.messages[0]?.content ?? '');
}

function promptOf(request: RecordedRequest | undefined): string {
  return JSON.stringify(request?.body.messages ?? []);
}

async function supervise(
  script: ScriptEntry[],
  {
    agents = travelAgents(),
    ...options
  }: Omit<Partial<SupervisorOrchestratorOptions>, 'agents'> & { agents?: Agent[] } = {},
) {
  const server = await createScriptedModelServer({ script });
  try {
    const client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
    const orchestrator = new SupervisorOrchestrator({
      agents: agents.map(({ name, description }) => ({ name, description })),
      model: 'supervisor-model',
      client,
      ...options,
    });
    const conversation = await runConversation({
      orchestrator,
      agents,
      messages: [REQUEST],
      logLevel: 'silent',
    });
    await conversation.app.close();
    server.assertDone();
    return { turn: conversation.turns[0]!, requests: server.requests };
  } finally {
    await server.close();
  }
}

describe('SupervisorOrchestrator', () => {
  it('decomposes into one concurrent fan-out, annotated, and synthesises the answer', async () => {
    const events: string[] = [];
    const { turn, requests } = await supervise(
      [
        plan({ flights: 'Flights to Rome', hotels: 'A hotel in Rome', weather: 'Rome weekend weather' }),
        plan({}, 'Fly Friday, stay at the Hotel Roma, expect sun.'),
      ],
      { agents: travelAgents(events) },
    );
    expect(turn.status).toBe('completed');
    expect(turn.reply).toBe('Fly Friday, stay at the Hotel Roma, expect sun.');
    // Every branch started before any finished: the sub-goals ran at once.
    expect(events.slice(0, 3).sort()).toEqual(['start flights', 'start hotels', 'start weather']);
    expect(events.slice(3).every((event) => event.startsWith('end'))).toBe(true);

    const [fanOut, answer] = turn.steps;
    expect(fanOut?.kind).toBe('fan-out');
    expect(fanOut?.calls.map((call) => [call.agent, call.message])).toEqual([
      ['flights', 'Flights to Rome'],
      ['hotels', 'A hotel in Rome'],
      ['weather', 'Rome weekend weather'],
    ]);
    expect(fanOut?.annotations).toMatchObject({
      correlationId: fanOut?.calls[0]?.toolCallId.replace(/\.1$/, ''),
      expectedBranches: 3,
      round: 1,
    });
    expect(fanOut?.usage).toMatchObject({ inputTokens: 50, outputTokens: 10 });
    expect(answer?.kind).toBe('answer');
    expect(answer?.annotations).toMatchObject({
      correlationId: fanOut?.annotations?.correlationId,
      round: 1,
      missing: [],
      synthesis: 'model',
    });
    // The decomposition is constrained to the candidates; the synthesis reads every branch's result.
    const format = requests[0]?.body.response_format;
    expect(JSON.stringify(format)).toContain('"enum":["flights","hotels","weather"]');
    for (const name of ['flights', 'hotels', 'weather'])
      expect(promptOf(requests[1])).toContain(`[Agent \\"${name}\\" replied]`);
  });

  it('reports a failed branch to the synthesis as MISSING, without its error text', async () => {
    const { turn, requests } = await supervise(
      [
        plan({ flights: 'Flights to Rome', hotels: 'A hotel in Rome', weather: 'Rome weather' }),
        (request) => {
          const missing = /MISSING: agent \\"(\w+)\\"/.exec(promptOf(request))?.[1];
          return plan({}, `Fly Friday; sunny. Missing: no ${missing} result could be found.`);
        },
      ],
      { agents: travelAgents([], ['hotels']) },
    );
    expect(turn.reply).toBe('Fly Friday; sunny. Missing: no hotels result could be found.');
    expect(systemOf(requests[1])).toMatch(/MISSING .*say plainly in the answer what is missing/);
    expect(promptOf(requests[1])).not.toContain('ECONNREFUSED');
    expect(turn.steps.at(-1)?.annotations).toMatchObject({ missing: ['hotels'] });
  });

  it('reports a branch still running after the fan-in grace period as missing, without waiting for its timeout', async () => {
    const hanging = defineAgent({
      name: 'hotels',
      description: 'Finds hotels',
      // Answers only when its 60 s agent timeout would end it: the grace period must cut it short.
      run: (_message, { signal }) =>
        new Promise<string>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
    });
    const agents = [...travelAgents().filter((agent) => agent.name !== 'hotels'), hanging];
    const { turn, requests } = await supervise(
      [
        plan({ flights: 'Flights to Rome', hotels: 'A hotel in Rome', weather: 'Rome weather' }),
        (request) => {
          const results = String(request.body.messages.at(-1)?.content);
          expect(results).toMatch(
            /MISSING: agent "hotels" gave no result \(Agent 'hotels' did not reply within 150 ms/,
          );
          return plan({}, 'Fly Friday; sunny. Missing: no hotel could be found in time.');
        },
      ],
      { agents, fanInGraceMs: 150, branchTimeoutMs: 20_000 },
    );
    expect(turn.reply).toBe('Fly Friday; sunny. Missing: no hotel could be found in time.');
    expect(turn.steps[0]?.calls.map((call) => [call.agent, call.fanInGraceMs, call.timeoutMs])).toEqual([
      ['flights', 150, 20_000],
      ['hotels', 150, 20_000],
      ['weather', 150, 20_000],
    ]);
    expect(turn.steps.at(-1)?.annotations).toMatchObject({ missing: ['hotels'] });
    expect(requests).toHaveLength(2);
  });

  it('runs a second round when the synthesis asks for more, with a new correlation id', async () => {
    const { turn, requests } = await supervise([
      plan({ flights: 'Flights to Rome' }),
      plan({ hotels: 'A hotel near the arrival airport' }),
      plan({}, 'Fly to FCO, sleep at the airport hotel.'),
    ]);
    expect(turn.reply).toBe('Fly to FCO, sleep at the airport hotel.');
    const [first, second, answer] = turn.steps;
    // A one-branch round is recorded as a plain call, annotated like any fan-out.
    expect([first?.kind, second?.kind, answer?.kind]).toEqual(['call', 'call', 'answer']);
    expect(second?.calls.map((call) => call.agent)).toEqual(['hotels']);
    expect(first?.annotations).toMatchObject({ round: 1, expectedBranches: 1 });
    expect(second?.annotations).toMatchObject({ round: 2, expectedBranches: 1 });
    expect(second?.annotations?.correlationId).not.toBe(first?.annotations?.correlationId);
    expect(answer?.annotations).toMatchObject({
      round: 2,
      correlationId: second?.annotations?.correlationId,
    });
    // The first synthesis may ask for one more round; the last must answer, from both rounds' results.
    expect(systemOf(requests[1])).toContain('1 more round is possible');
    expect(systemOf(requests[2])).toContain('No more agents can be asked');
    expect(promptOf(requests[2])).toMatch(/Round 1 results.*flights.*Round 2 results.*hotels/);
  });

  it('stops at the round bound with an answer that says so', async () => {
    const { turn, requests } = await supervise(
      [
        plan({ flights: 'Flights to Rome' }),
        // At the bound an answer is required: asking for more without one is sent back.
        plan({ weather: 'Rome weather' }),
        plan({ weather: 'Rome weather', hotels: 'Hotels' }, 'Flights on Friday at 9:00.'),
      ],
      { maxRounds: 1 },
    );
    expect(turn.status).toBe('completed');
    expect(turn.reply).toMatch(
      /^Flights on Friday at 9:00\.\n\n\(I stopped after 1 round of asking the agents/,
    );
    expect(turn.steps.map((step) => step.kind)).toEqual(['call', 'answer']);
    expect(turn.steps.at(-1)?.annotations).toMatchObject({ round: 1, bounded: true });
    expect(String(requests[2]?.body.messages.at(-1)?.content)).toContain(
      'write the answer from what is known',
    );
  });

  it('retries an invalid decomposition with feedback, then applies the fallback', async () => {
    const { turn, requests } = await supervise(
      ['not json', plan({ trains: 'Trains to Rome' })].map((entry) =>
        typeof entry === 'string' ? { content: entry } : entry,
      ),
      { fallback: { message: 'Sorry, I could not plan that.' } },
    );
    expect(turn.reply).toBe('Sorry, I could not plan that.');
    expect(turn.steps.map((step) => step.kind)).toEqual(['answer']);
    expect(String(requests[1]?.body.messages.at(-1)?.content)).toMatch(/not valid JSON/);
    expect(turn.steps[0]?.calls[0]?.thought).toMatch(/"trains" is not an available agent/);
  });

  it('gives the agents’ replies and names what is missing when the synthesis stays invalid', async () => {
    const { turn } = await supervise(
      [plan({ flights: 'Flights', hotels: 'Hotels' }), { content: '{}' }, { content: 'still not it' }],
      { agents: travelAgents([], ['hotels']) },
    );
    expect(turn.reply).toBe(
      'flights: flights result for: Flights\n\nMissing: I could not get a result from hotels.',
    );
    expect(turn.steps.at(-1)?.annotations).toMatchObject({ synthesis: 'fallback', missing: ['hotels'] });
  });

  it('answers a simple request directly when the model gives no sub-goal', async () => {
    const { turn } = await supervise([plan({}, 'Hello! I can plan trips.')]);
    expect(turn.reply).toBe('Hello! I can plan trips.');
    expect(turn.steps.map((step) => step.kind)).toEqual(['answer']);
  });

  it('rejects a missing model, bad bounds and an unknown fallback agent at construction', () => {
    const agents = [{ name: 'a', description: 'a' }];
    const client = new OpenAI({ apiKey: 'test', baseURL: 'http://127.0.0.1:9' });
    const attempts: SupervisorOrchestratorOptions[] = [
      { agents, model: '', client },
      { agents, model: 'm', client, maxRounds: 0 },
      { agents, model: 'm', client, fallback: { agent: 'z' } },
    ];
    for (const options of attempts) {
      expect(() => new SupervisorOrchestrator(options)).toThrow();
      try {
        new SupervisorOrchestrator(options);
      } catch (error) {
        expect(ConfigurationError.isInstance(error), String(error)).toBe(true);
      }
    }
  });
});

const contractAgents: AgentMeta[] = [
  { name: 'calculator', description: 'Evaluates arithmetic expressions' },
  { name: 'clock', description: 'Tells the current time and date' },
  { name: 'weather', description: 'Gives weather forecasts' },
];
const topics: Record<string, RegExp> = {
  calculator: /\d\s*[-+*/x]\s*\d|\btimes\b|\bplus\b/i,
  clock: /\btime\b|\bdate\b/i,
  weather: /\bweather\b|\brain\b|\bforecast\b/i,
};
const routing: RoutingExample[] = [
  { message: 'what is 12 times 7', agent: 'calculator' },
  { message: 'what time is it in Tokyo', agent: 'clock' },
  { message: 'will it rain tomorrow in Lisbon', agent: 'weather' },
];

/**
 * A stand-in supervising model: it gives the message to the agent whose topic
 * it mentions (only among the agents the schema allows), answers with the
 * agents' replies, and says what is missing.
 */
function supervisingModel(request: RecordedRequest): ScriptedReply {
  const messages = request.body.messages;
  const allowed = JSON.stringify(request.body.response_format);
  const last = String(messages.at(-1)?.content ?? '');
  if (/^Round 1 results/.test(last)) {
    const replies = [...last.matchAll(/\[Agent "[^"]+" replied\]\n([^[]*)/g)].map((match) =>
      match[1]?.trim(),
    );
    const missing = [...last.matchAll(/\[MISSING: agent "([^"]+)"/g)].map((match) => match[1]);
    const answer = [
      ...replies.map((reply) => `Here is what I found: ${reply}`),
      ...missing.map((name) => `Sorry, the ${name} agent could not answer, so that part is missing.`),
    ].join(' ');
    return plan({}, answer);
  }
  const topic = Object.keys(topics).find(
    (agent) => topics[agent]?.test(last) && allowed.includes(`"${agent}"`),
  );
  return topic ? plan({ [topic]: last }) : plan({}, 'I am not sure what you need; could you say more?');
}

describeRouterContract('SupervisorOrchestrator (scripted model)', async () => {
  const server = await createScriptedModelServer({
    script: Array.from({ length: 64 }, () => supervisingModel),
  });
  const client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
  return {
    orchestrator: new SupervisorOrchestrator({ agents: contractAgents, model: 'supervisor-model', client }),
    routing,
    async close() {
      await server.close();
      expect(server.problems).toEqual([]);
    },
  };
});
