import { AbstractOrchestrator, ConfigurationError, type Conversation, useProfile } from '@switchboard/core';
import { type Agent, App, agentMeta, defineAgent, orchestratorAgent } from '@switchboard/runtime';
import { createScriptedModelServer, recordSpans } from '@switchboard/runtime/testing';
import OpenAI from 'openai';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { bestOf, fallbackChain, KeywordOrchestrator, type StrategyOrchestrator } from '../src/index.js';

const SECRET = 'ECONNREFUSED 10.0.0.7:5432 at Pool.connect (/srv/app/db.js:12:7)';

/** Agents answering with fixed texts (`null` fails), counting their runs. */
function team(answers: Record<string, string | null>) {
  const runs: string[] = [];
  const agents: Agent[] = Object.entries(answers).map(([name, answer]) =>
    defineAgent({
      name,
      description: `agent ${name}`,
      run: () => {
        runs.push(name);
        if (answer === null) throw new Error(SECRET);
        return answer;
      },
    }),
  );
  return { agents, runs };
}

const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

function appOf(orchestrator: StrategyOrchestrator, agents: readonly Agent[], profiles = {}) {
  const app = new App({ name: 'strategies', agents, profiles, logLevel: 'silent' }).mount(orchestrator);
  apps.push(app);
  return app;
}

const agentSteps = (steps: readonly { kind: string; calls: { agent: string }[] }[]) =>
  steps.filter((step) => step.kind !== 'note').map((step) => step.calls.map((call) => call.agent));

describe('fallbackChain', () => {
  const recording = recordSpans();
  afterEach(() => recording.reset());
  afterAll(() => recording.shutdown());

  it('tries agents in order until one succeeds, each attempt a span and a step with its predecessor’s outcome', async () => {
    const { agents, runs } = team({
      tool: null,
      rag: 'too short',
      web: 'A long enough answer from the web.',
      spare: 'x',
    });
    const chain = fallbackChain(agents, { until: (reply) => reply.content.length > 20 });
    const result = await appOf(chain, agents).chat({ message: 'who won?' });

    expect(result.status).toBe('completed');
    expect(result.reply).toBe('A long enough answer from the web.');
    expect(runs).toEqual(['tool', 'rag', 'web']);
    expect(agentSteps(result.steps)).toEqual([['tool'], ['rag'], ['web'], ['route_to_user']]);
    expect(result.steps.map((step) => step.annotations)).toEqual([
      { strategy: 'fallback', attempt: 1, of: 4 },
      { strategy: 'fallback', attempt: 2, of: 4, previous: { agent: 'tool', outcome: 'failed' } },
      { strategy: 'fallback', attempt: 3, of: 4, previous: { agent: 'rag', outcome: 'rejected' } },
      { strategy: 'fallback', winner: 'web', attempts: 3 },
    ]);
    const agentSpans = recording.spans.filter((span) => span.name.startsWith('agent '));
    expect(agentSpans.map((span) => span.name)).toEqual(['agent tool', 'agent rag', 'agent web']);
    expect(JSON.stringify(result)).not.toContain('10.0.0.7');
  });

  it('answers with the first ok reply by priority when none meets the condition, and says so when all fail', async () => {
    const partial = team({ a: null, b: 'short', c: 'tiny' });
    const chain = fallbackChain(partial.agents, { until: () => false });
    const result = await appOf(chain, partial.agents).chat({ message: 'q' });
    expect(result.reply).toBe('short');
    expect(result.steps.at(-1)?.annotations).toEqual({
      strategy: 'fallback',
      attempts: 3,
      winner: null,
      partial: 'b',
    });

    const broken = team({ a: null, b: null });
    const none = await appOf(fallbackChain(broken.agents), broken.agents).chat({ message: 'q' });
    expect(none.reply).toBe(
      'Sorry, none of the 2 agents I tried could answer this. Please try again in a moment.',
    );
    expect(broken.runs).toEqual(['a', 'b']);
  });
});

describe('nested as one agent', () => {
  it('runs a chain inside orchestratorAgent: its attempts are the inner steps of the outer call', async () => {
    const { agents, runs } = team({ tool: null, rag: 'from the docs' });
    const research = orchestratorAgent({
      name: 'research',
      description: 'Finds an answer',
      keywords: ['rate'],
      orchestrator: fallbackChain(agents),
      agents,
    });
    const router = new KeywordOrchestrator({
      name: 'front',
      agents: [agentMeta(research)],
      fallbackAgent: 'research',
    });
    const app = new App({ name: 'nested', agents: [research], logLevel: 'silent' }).mount(router);
    apps.push(app);
    const result = await app.chat({ message: 'the rate?' });
    expect(result.reply).toBe('from the docs');
    expect(runs).toEqual(['tool', 'rag']);
    const inner = result.steps[0]?.calls[0]?.innerSteps ?? [];
    expect(inner.map((step) => step.calls.map((call) => [call.agent, call.status]))).toEqual([
      [['tool', 'error']],
      [['rag', 'ok']],
      [['route_to_user', undefined]],
    ]);
  });
});

describe('bestOf', () => {
  it('runs every agent at once as one fan-out and keeps the best by a scoring function, recording each score', async () => {
    let started = 0;
    let release: () => void = () => {};
    const allStarted = new Promise<void>((resolve) => {
      release = resolve;
    });
    const overlapping = (name: string, answer: string) =>
      defineAgent({
        name,
        description: name,
        run: async () => {
          if (++started === 3) release();
          // Each waits for the other two to start: this only ends if all three ran at the same time.
          await allStarted;
          return answer;
        },
      });
    const agents = [
      overlapping('a', 'ok'),
      overlapping('b', 'the longest answer here'),
      overlapping('c', 'medium one'),
    ];
    const best = bestOf(agents, { judge: ({ content }) => content.length / 100 });
    const result = await appOf(best, agents).chat({ message: 'draft it' });

    expect(result.reply).toBe('the longest answer here');
    expect(result.steps[0]?.kind).toBe('fan-out');
    expect(agentSteps(result.steps)).toEqual([['a', 'b', 'c'], ['route_to_user']]);
    expect(result.steps.at(-1)?.annotations).toEqual({
      strategy: 'best-of',
      correlationId: result.steps[0]?.annotations?.correlationId,
      judge: 'function',
      candidates: [
        { agent: 'a', score: 0.02 },
        { agent: 'b', score: 0.23 },
        { agent: 'c', score: 0.1 },
      ],
      failed: [],
      winner: 'b',
      why: "'b' has the highest score (0.23) of 3",
    });
  });

  it('asks a judge model through the openai client, records its scores and reasons, and falls back to the priority', async () => {
    const verdict = {
      scores: [
        { candidate: 1, score: 0.4, reason: 'vague' },
        { candidate: 2, score: 0.9, reason: 'cites the source' },
      ],
      best: 2,
      reason: 'candidate 2 answers with a source',
    };
    const server = await createScriptedModelServer({
      script: [
        { content: JSON.stringify(verdict), usage: { inputTokens: 50, outputTokens: 20 } },
        { content: 'not json' },
        { content: JSON.stringify({ ...verdict, best: 7 }) },
      ],
    });
    try {
      const client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
      const { agents } = team({ formal: 'Paris.', sourced: 'Paris (per the atlas).', down: null });
      const best = bestOf(agents, { judge: { model: 'judge', client } });
      const judged = await appOf(best, agents).chat({ message: 'capital of France?' });
      expect(judged.reply).toBe('Paris (per the atlas).');
      const step = judged.steps.at(-1);
      expect(step?.usage).toEqual({ inputTokens: 50, outputTokens: 20 });
      expect(step?.annotations).toMatchObject({
        judge: 'model',
        candidates: [
          { agent: 'formal', score: 0.4, reason: 'vague' },
          { agent: 'sourced', score: 0.9, reason: 'cites the source' },
        ],
        failed: [{ agent: 'down', outcome: 'failed' }],
        winner: 'sourced',
        why: 'candidate 2 answers with a source',
      });
      const prompt = JSON.stringify(server.requests[0]?.body.messages);
      expect(prompt).toContain('Candidate 2 (sourced):\\nParis (per the atlas).');

      const fallback = await appOf(bestOf(agents, { judge: { model: 'judge', client } }), agents).chat({
        message: 'again',
      });
      expect(fallback.reply).toBe('Paris.');
      expect(fallback.steps.at(-1)?.annotations).toMatchObject({
        judge: 'priority',
        judgeFailed: true,
        winner: 'formal',
      });
      server.assertDone();
    } finally {
      await server.close();
    }
  });
});

describe('the active profile picks the strategy', () => {
  const profiles = { brisk: { turnTimeoutMs: 300 } };

  it('runs a best-of as a chain under fallback, the first only under conservative, and a chain as best-of under exploratory', async () => {
    const { agents, runs } = team({ a: null, b: 'from b', c: 'from c' });
    const app = appOf(bestOf(agents), agents);
    const chained = await app.chat({ message: 'q', metadata: { profile: 'fallback' } });
    expect(agentSteps(chained.steps)).toEqual([['a'], ['b'], ['route_to_user']]);
    expect(chained.reply).toBe('from b');

    runs.length = 0;
    const first = await app.chat({ message: 'q', metadata: { profile: 'conservative' } });
    expect(runs).toEqual(['a']);
    expect(first.reply).toMatch(/^Sorry, none of the 1 agents/);

    runs.length = 0;
    const chainApp = appOf(fallbackChain(agents), agents);
    const explored = await chainApp.chat({ message: 'q', metadata: { profile: 'exploratory' } });
    expect(agentSteps(explored.steps)).toEqual([['a', 'b', 'c'], ['route_to_user']]);
    expect(explored.reply).toBe('from b');
    expect(explored.steps.at(-1)?.annotations).toMatchObject({
      strategy: 'best-of',
      judge: 'priority',
      winner: 'b',
    });
  });

  it('switches mid-turn when a router calls useProfile: the rest of a chain fans out under exploratory', async () => {
    const { agents, runs } = team({ a: null, b: 'from b', c: 'from c, longer' });
    const chain = fallbackChain(agents);
    class Escalating extends AbstractOrchestrator {
      protected handleMessage(conversation: Conversation) {
        // A switch applies from the next decision on.
        if (conversation.hop === 0) useProfile(conversation, 'exploratory');
        return chain.decide(conversation);
      }
    }
    const app = new App({ name: 'escalating', agents, logLevel: 'silent' }).mount(
      new Escalating({ name: 'escalating', agents: chain.agents }),
    );
    apps.push(app);
    const result = await app.chat({ message: 'q', metadata: { profile: 'fallback' } });
    expect(agentSteps(result.steps)).toEqual([['a'], ['b', 'c'], ['route_to_user']]);
    expect(runs).toEqual(['a', 'b', 'c']);
    expect(result.reply).toBe('from b');
  });

  it('ends at the profile’s deadline as limited, with the replies that came in', async () => {
    const slow = defineAgent({
      name: 'slow',
      description: 'never answers',
      run: () => new Promise<string>(() => {}),
    });
    const fast = defineAgent({ name: 'fast', description: 'answers', run: () => 'the quick draft' });
    const app = appOf(bestOf([fast, slow]), [fast, slow], profiles);
    const result = await app.chat({ message: 'q', metadata: { profile: 'brisk' } });
    expect(result.status).toBe('limited');
    expect(result.error?.code).toBe('turn_deadline_exceeded');
    expect(result.reply).toContain('the quick draft');
  });

  it('fails fast on a bad configuration', () => {
    const { agents } = team({ a: 'x' });
    expect(() => fallbackChain([])).toThrow(ConfigurationError);
    expect(() => bestOf([...agents, ...agents])).toThrow(/agent names must be unique/);
    expect(() => bestOf(agents, { judge: { model: '' } as never })).toThrow(/needs a model name/);
    expect(() => bestOf(agents, { modes: { conservative: 'all' as never } })).toThrow(
      /not one of first, fallback, best-of/,
    );
  });
});
