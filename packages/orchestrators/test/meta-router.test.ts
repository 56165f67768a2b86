import {
  AbstractOrchestrator,
  type AgentMeta,
  ConfigurationError,
  type Conversation,
  currentUserMessage,
  type Decision,
  latestToolResults,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import { App, defineAgent } from '@switchboard/runtime';
import { createRedisStores } from '@switchboard/runtime/redis';
import { createScriptedModelServer, type ScriptedModelServer } from '@switchboard/runtime/testing';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, useRedis } from '../../runtime/test/support/redis.js';
import { KeywordOrchestrator } from '../src/keyword-orchestrator.js';
import { taskFramingOf } from '../src/meta-route-view.js';
import { type MetaRouteChooser, MetaRouter, type MetaRouterOptions } from '../src/meta-router.js';
import { RoundRobinOrchestrator } from '../src/round-robin-orchestrator.js';
import { RecordingTracer } from './llm-recording-tracer.js';
import { describeRouterContract } from './router-contract.js';

const agents: AgentMeta[] = [
  { name: 'calculator', description: 'Evaluates arithmetic expressions', keywords: ['times', 'plus'] },
  { name: 'clock', description: 'Tells the current time and date', keywords: ['time', 'date'] },
  { name: 'weather', description: 'Gives weather forecasts', keywords: ['weather', 'rain', 'forecast'] },
];
const [calculator, clock, weather] = agents as [AgentMeta, AgentMeta, AgentMeta];

/** Calls its agent with the user's message, then answers `<label>: <reply>`; records the framing it saw. */
class LabelledPattern extends AbstractOrchestrator {
  readonly framings: (string | undefined)[] = [];
  constructor(
    readonly label: string,
    agent: AgentMeta,
  ) {
    super({ name: label, agents: [agent] });
  }
  protected handleMessage(conversation: Conversation): Decision {
    this.framings.push(taskFramingOf(conversation));
    const [reply] = latestToolResults(conversation);
    if (reply) return routeToUser(`${this.label}: ${reply.content}`);
    const [agent] = conversation.agents;
    if (!agent) return routeToUser(`${this.label}: no agent`);
    return toolCall(agent.name, currentUserMessage(conversation).content);
  }
}

const tracer = new RecordingTracer();
beforeAll(() => tracer.register());
afterAll(() => tracer.unregister());

const openApps: App[] = [];
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await Promise.all(openApps.splice(0).map((app) => app.close()));
  await server?.close();
  server = undefined;
});

function appWith(router: MetaRouter, options: { approve?: string; stores?: object } = {}): App {
  const hosted = agents.map((meta) =>
    defineAgent({
      ...meta,
      requiresApproval: meta.name === options.approve ? true : undefined,
      run: (message) => `${meta.name} did "${message}"`,
    }),
  );
  const app = new App({ name: 'meta', agents: hosted, logLevel: 'silent', ...options.stores }).mount(router);
  openApps.push(app);
  return app;
}

const byDigits: MetaRouteChooser = ({ message }) =>
  /\d/.test(message)
    ? { taskType: 'arithmetic', rationale: 'the message has numbers' }
    : { taskType: 'other', rationale: 'no numbers' };

function ruleRouter(overrides: Partial<MetaRouterOptions> = {}): MetaRouter {
  return new MetaRouter({
    agents,
    taskTypes: [
      { name: 'arithmetic', description: 'Sums and products', patterns: ['math'] },
      { name: 'other', description: 'Everything else', patterns: ['keyword', 'rotation'] },
    ],
    patterns: {
      math: new KeywordOrchestrator({ agents: [calculator] }),
      keyword: new KeywordOrchestrator({ agents: [clock, weather] }),
      rotation: new RoundRobinOrchestrator({ agents: [clock, weather], scope: 'session' }),
    },
    defaultPattern: 'keyword',
    choose: byDigits,
    ...overrides,
  });
}

describeRouterContract('MetaRouter (function chooser over keyword patterns)', () => ({
  orchestrator: ruleRouter(),
  routing: [
    { message: 'what is 12 times 7', agent: 'calculator' },
    { message: 'what time is it in Tokyo', agent: 'clock' },
    { message: 'will it rain tomorrow, what is the weather forecast', agent: 'weather' },
  ],
}));

describe('MetaRouter configuration', () => {
  it('rejects a task type naming an unknown pattern, and a pattern with agents the router lacks', () => {
    const patterns = { react: new KeywordOrchestrator({ agents: [clock] }) };
    expect(
      () =>
        new MetaRouter({
          agents,
          patterns,
          choose: byDigits,
          taskTypes: [{ name: 'chat', description: 'Chat', patterns: ['react', 'supervisor'] }],
        }),
    ).toThrow(/task type 'chat' names the unknown pattern 'supervisor'/);
    const error = (() => {
      try {
        new MetaRouter({ agents: [clock], patterns: { all: new KeywordOrchestrator({ agents }) } });
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(ConfigurationError.isInstance(error)).toBe(true);
    expect(String(error)).toMatch(
      /pattern 'all' uses agents the meta-router does not have: calculator, weather/,
    );
    expect(
      () =>
        new MetaRouter({
          agents,
          patterns,
          taskTypes: [
            { name: 'a', description: 'A', patterns: ['react'] },
            { name: 'b', description: 'B', patterns: ['react'] },
          ],
        }),
    ).toThrow(/give it a model or a choose function/);
  });
});

describe('MetaRouter with a function chooser (offline)', () => {
  it('sends each turn to the chosen pattern and records the choice as a note step', async () => {
    const app = appWith(
      ruleRouter({
        choose: (input) =>
          /\d/.test(input.message)
            ? { taskType: 'arithmetic', rationale: 'numbers', confidence: 0.9 }
            : { taskType: 'other', pattern: 'rotation', rationale: 'no numbers' },
      }),
    );
    const math = await app.chat({ sessionId: 'functions', message: 'what is 3 plus 4' });
    expect(math.reply).toBe('calculator did "what is 3 plus 4"');
    expect(math.steps[0]).toMatchObject({
      hop: 0,
      kind: 'note',
      label: 'meta-route',
      annotations: {
        pattern: 'math',
        taskType: 'arithmetic',
        choice: { taskType: 'arithmetic', pattern: 'math' },
        candidates: { taskTypes: ['arithmetic', 'other'], patterns: ['math'] },
        rationale: 'numbers',
        confidence: 0.9,
        chooser: 'function',
      },
    });
    expect(math.steps[1]).toMatchObject({ kind: 'call', annotations: { pattern: 'math' } });

    // Round robin picks clock then weather whatever the message says: the keyword pattern would not.
    const first = await app.chat({ sessionId: 'functions', message: 'tell me about the weather' });
    const second = await app.chat({ sessionId: 'functions', message: 'tell me about the weather' });
    expect([first.reply, second.reply]).toEqual([
      'clock did "tell me about the weather"',
      'weather did "tell me about the weather"',
    ]);
    expect(first.steps[0]?.annotations).toMatchObject({
      pattern: 'rotation',
      candidates: { patterns: ['keyword', 'rotation'] },
    });
  });

  it('falls back to the default pattern when the chooser names an unknown task type, and says why', async () => {
    const app = appWith(ruleRouter({ choose: () => ({ taskType: 'poetry' }) }));
    const result = await app.chat({ message: 'what is the weather' });
    expect(result.reply).toBe('weather did "what is the weather"');
    expect(result.steps[0]?.annotations).toMatchObject({
      pattern: 'keyword',
      taskType: 'general',
      fallback: true,
      problems: ["choose returned the unknown task type 'poetry'"],
    });
  });

  it('without task types, hands every turn to the default pattern as the general task', async () => {
    const router = new MetaRouter({ agents, patterns: { keyword: new KeywordOrchestrator({ agents }) } });
    const result = await appWith(router).chat({ message: 'what time is it' });
    expect(result.reply).toBe('clock did "what time is it"');
    expect(result.steps[0]?.annotations).toMatchObject({ taskType: 'general', pattern: 'keyword' });
  });
});

describe('MetaRouter later hops', () => {
  it('keeps the pattern chosen on hop 0 for the rest of the turn, with the framing at every hop', async () => {
    let calls = 0;
    const first = new LabelledPattern('first', clock);
    const second = new LabelledPattern('second', clock);
    const router = new MetaRouter({
      agents,
      taskTypes: [
        {
          name: 'time',
          description: 'Time questions',
          framing: 'Answer in UTC.',
          patterns: ['first', 'second'],
        },
      ],
      patterns: { first, second },
      // A chooser that would pick differently if asked again within the turn.
      choose: () => ({ taskType: 'time', pattern: calls++ === 0 ? 'first' : 'second' }),
    });
    const result = await appWith(router).chat({ message: 'what time is it' });
    expect(result.reply).toBe('first: clock did "what time is it"');
    expect(calls).toBe(1);
    expect(result.steps.map((step) => [step.kind, step.annotations?.pattern])).toEqual([
      ['note', 'first'],
      ['call', 'first'],
      ['answer', 'first'],
    ]);
    expect(first.framings).toEqual([
      '[Task type "time"] Answer in UTC.',
      '[Task type "time"] Answer in UTC.',
    ]);
    expect(second.framings).toEqual([]);
  });
});

describe('MetaRouter with a model chooser', () => {
  const pick = (field: 'task_type' | 'pattern', choice: string, confidence: number | null = 0.8) =>
    JSON.stringify({ thought: 'hmm', [field]: choice, rationale: `looks like ${choice}`, confidence });

  async function modelRouter(script: string[]) {
    server = await createScriptedModelServer({ script });
    const client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
    const patterns = {
      math: new LabelledPattern('math', calculator),
      time: new LabelledPattern('time', clock),
      forecast: { orchestrator: new LabelledPattern('forecast', weather), whenToUse: 'Planning ahead' },
    };
    return new MetaRouter({
      agents,
      taskTypes: [
        { name: 'arithmetic', description: 'Sums', whenToUse: 'Numbers are involved', patterns: ['math'] },
        { name: 'schedule', description: 'Dates and times', patterns: ['time', 'forecast'] },
        { name: 'outdoors', description: 'Weather', patterns: ['forecast'] },
      ],
      patterns,
      defaultPattern: 'time',
      model: 'meta-model',
      client,
    });
  }

  it("routes to the model's task type and pattern, retrying an invalid choice with feedback", async () => {
    const router = await modelRouter([
      pick('task_type', 'astrology'),
      pick('task_type', 'schedule', 0.7),
      pick('pattern', 'forecast'),
    ]);
    tracer.spans.length = 0;
    const result = await appWith(router).chat({ message: 'Can I picnic on Saturday?' });

    expect(result.reply).toBe('forecast: weather did "Can I picnic on Saturday?"');
    const retry = server!.requests[1]!.body.messages;
    expect(String(retry.at(-1)?.content)).toContain('"astrology" is not one of the options');
    expect(String(retry.at(-1)?.content)).toContain('"arithmetic", "schedule", "outdoors"');
    expect(String(server!.requests[0]!.body.messages[0]?.content)).toContain(
      '- arithmetic: Sums When to use: Numbers are involved',
    );
    expect(String(server!.requests[2]!.body.messages[0]?.content)).toContain(
      '- forecast: When to use: Planning ahead',
    );
    expect(result.steps[0]?.annotations).toMatchObject({
      taskType: 'schedule',
      pattern: 'forecast',
      confidence: 0.7,
      chooser: 'model',
      candidates: { taskTypes: ['arithmetic', 'schedule', 'outdoors'], patterns: ['time', 'forecast'] },
    });
    // The three model calls are counted in the choosing step's usage.
    expect(result.usage?.inputTokens).toBeGreaterThan(0);
    const decision = tracer.spans.find((span) => span.name === 'route 0');
    expect(decision?.attributes).toMatchObject({
      'switchboard.meta.task_type': 'schedule',
      'switchboard.meta.pattern': 'forecast',
      'switchboard.meta.confidence': 0.7,
      'switchboard.meta.candidates.patterns': ['time', 'forecast'],
    });
    server!.assertDone();
  });

  it('skips the pattern choice for a task type with one pattern', async () => {
    const router = await modelRouter([pick('task_type', 'arithmetic', null)]);
    const result = await appWith(router).chat({ message: '2 + 2' });
    expect(result.reply).toBe('math: calculator did "2 + 2"');
    expect(result.steps[0]?.annotations).not.toHaveProperty('confidence');
    server!.assertDone();
  });

  it('falls back to the default pattern when the choice stays invalid', async () => {
    const router = await modelRouter(['not json', pick('task_type', 'astrology')]);
    tracer.spans.length = 0;
    const result = await appWith(router).chat({ message: 'hello' });
    expect(result.reply).toBe('time: clock did "hello"');
    expect(result.steps[0]?.annotations).toMatchObject({
      taskType: 'general',
      pattern: 'time',
      fallback: true,
    });
    const decision = tracer.spans.find((span) => span.name === 'route 0');
    expect(decision?.attributes['switchboard.meta.fallback']).toBe(true);
    server!.assertDone();
  });
});

describe('MetaRouter across replicas (Redis)', () => {
  const redis = useRedis();

  it('a turn resumed on another replica continues with the pattern chosen on the first', async () => {
    const keyPrefix = redis.prefix();
    const replica = (pattern: string) => {
      const router = new MetaRouter({
        agents,
        taskTypes: [{ name: 'time', description: 'Time', patterns: ['first', 'second'] }],
        patterns: {
          first: new LabelledPattern('first', clock),
          second: new LabelledPattern('second', clock),
        },
        // Each replica's chooser would pick its own pattern: only memory can carry the first choice.
        choose: () => ({ taskType: 'time', pattern }),
      });
      return appWith(router, { approve: 'clock', stores: createRedisStores(REDIS_URL, { keyPrefix }) });
    };
    const a = replica('first');
    const b = replica('second');
    const paused = await a.chat({ sessionId: 'replicas', message: 'what time is it' });
    expect(paused.status).toBe('awaiting_approval');
    const done = await b.resolveApproval({
      sessionId: 'replicas',
      approvalId: paused.approvals![0]!.id,
      decision: 'approve',
    });
    expect(done).toMatchObject({ status: 'completed', reply: 'first: clock did "what time is it"' });
    expect(done.steps.filter((step) => step.kind === 'note')).toHaveLength(1);
  });
});
