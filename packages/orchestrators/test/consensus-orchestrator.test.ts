import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigurationError } from '@switchboard/core';
import { type Agent, defineAgent } from '@switchboard/runtime';
import { createScriptedModelServer, runConversation } from '@switchboard/runtime/testing';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { ConsensusOrchestrator, type ConsensusOrchestratorOptions } from '../src/index.js';
import { TestSession } from './support/turn-driver.js';

const SECRET = 'ECONNREFUSED 10.0.0.7:5432 at Pool.connect (/srv/app/db.js:12:7)';

/** Voters answering with fixed texts; `null` makes a voter fail. */
function voters(answers: Record<string, string | null>): Agent[] {
  return Object.entries(answers).map(([name, answer]) =>
    defineAgent({
      name,
      description: `voter ${name}`,
      run: () => {
        if (answer === null) throw new Error(SECRET);
        return answer;
      },
    }),
  );
}

async function ask(
  agents: Agent[],
  options: Omit<ConsensusOrchestratorOptions, 'agents'> = {},
  message = 'What is the capital of France?',
) {
  const orchestrator = new ConsensusOrchestrator({
    agents: agents.map(({ name, description }) => ({ name, description })),
    ...options,
  });
  const conversation = await runConversation({
    orchestrator,
    agents,
    messages: [message],
    logLevel: 'silent',
  });
  await conversation.app.close();
  const turn = conversation.turns[0]!;
  return { turn, fanOut: turn.steps[0], answer: turn.steps.at(-1) };
}

describe('ConsensusOrchestrator', () => {
  it('asks every voter in one fan-out and answers with the majority, recording the disagreement', async () => {
    const { turn, fanOut, answer } = await ask(voters({ a: ' Paris. ', b: 'paris', c: 'Lyon' }));
    expect(turn.status).toBe('completed');
    expect(turn.reply).toBe('Paris.');
    expect(fanOut?.kind).toBe('fan-out');
    expect(fanOut?.calls.map((call) => call.agent)).toEqual(['a', 'b', 'c']);
    expect(fanOut?.annotations).toEqual({ correlationId: expect.any(String), expectedBranches: 3 });
    expect(answer?.annotations).toEqual({
      correlationId: fanOut?.annotations?.correlationId,
      voters: 3,
      failed: [],
      votes: { paris: 2, lyon: 1 },
      agreement: 0.67,
      dissent: [{ agent: 'c', answer: 'lyon' }],
      aggregate: 'majority',
    });
  });

  it('breaks a tie by the declared voter order', async () => {
    const agents = voters({ a: 'red', b: 'blue' });
    expect((await ask(agents, { voters: ['b', 'a'] })).turn.reply).toBe('blue');
    expect((await ask(agents, { voters: ['a', 'b'] })).turn.reply).toBe('red');
  });

  it('leaves a failed voter out and counts it', async () => {
    const { turn, answer } = await ask(voters({ a: null, b: '42', c: '42!' }));
    expect(turn.reply).toBe('42');
    expect(answer?.annotations).toMatchObject({ voters: 3, failed: ['a'], votes: { '42': 2 }, agreement: 1 });
  });

  it('says that no agent could answer when every voter fails, without their error text', async () => {
    const { turn, answer } = await ask(voters({ a: null, b: null }));
    expect(turn.status).toBe('completed');
    expect(turn.reply).toMatch(/none of the 2 agents .* could answer/i);
    expect(turn.reply).not.toContain('ECONNREFUSED');
    expect(answer?.annotations).toMatchObject({ failed: ['a', 'b'], agreement: 0, votes: {} });
  });

  it('runs the voters concurrently', async () => {
    const events: string[] = [];
    const agents = ['a', 'b', 'c'].map((name) =>
      defineAgent({
        name,
        description: name,
        run: async () => {
          events.push(`start ${name}`);
          await sleep(20);
          events.push(`end ${name}`);
          return 'yes';
        },
      }),
    );
    await ask(agents);
    // Every voter started before any finished: their run times overlap.
    expect(events.slice(0, 3).sort()).toEqual(['start a', 'start b', 'start c']);
    expect(events.slice(3).every((event) => event.startsWith('end'))).toBe(true);
  });

  it('asks only the voters among the candidates', async () => {
    const orchestrator = new ConsensusOrchestrator({
      agents: ['a', 'b', 'c'].map((name) => ({ name, description: name })),
    });
    const session = new TestSession({
      orchestrator,
      agents: { a: () => 'no', b: () => 'yes', c: () => 'yes' },
    });
    const outcome = await session.send('well?', { candidates: ['a', 'b'] });
    expect(outcome.agentCalls.map((call) => call.toolName)).toEqual(['a', 'b']);
    expect(outcome.reply).toBe('no');
  });

  it('takes a function as the aggregator, given the answers in voter order and the tally', async () => {
    const { turn, answer } = await ask(voters({ a: 'short', b: 'a longer answer', c: 'short' }), {
      aggregate: (answers, { tally }) => ({
        answer: `${answers.map((entry) => entry.agent).join('+')}: ${tally.agreement}`,
        reason: 'test',
      }),
    });
    expect(turn.reply).toBe('a+b+c: 0.67');
    expect(answer?.annotations).toMatchObject({
      aggregate: 'function',
      votes: { short: 2, 'a longer answer': 1 },
    });
  });

  it('asks a judge model through the openai client and records its usage on the answer step', async () => {
    const server = await createScriptedModelServer({
      script: [
        {
          content: JSON.stringify({ answer: 'Paris (two of three agree).', reason: 'b is wrong' }),
          usage: { inputTokens: 90, outputTokens: 11 },
        },
      ],
    });
    try {
      const client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
      const { turn, answer } = await ask(voters({ a: 'Paris', b: 'Lyon', c: 'Paris' }), {
        aggregate: { model: 'judge-model', client },
      });
      expect(turn.reply).toBe('Paris (two of three agree).');
      expect(answer?.usage).toEqual({ inputTokens: 90, outputTokens: 11 });
      expect(answer?.annotations).toMatchObject({ aggregate: 'judge', agreement: 0.67 });
      const prompt = JSON.stringify(server.requests[0]?.body.messages);
      for (const text of ['What is the capital of France?', '(a):\\nParis', '(b):\\nLyon', '(c):\\nParis'])
        expect(prompt).toContain(text);
      server.assertDone();
    } finally {
      await server.close();
    }
  });

  it('falls back to the majority when the judge gives no valid verdict', async () => {
    const server = await createScriptedModelServer({
      script: [{ content: 'not json' }, { content: JSON.stringify({ answer: ' ', reason: 'x' }) }],
    });
    try {
      const client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
      const { turn, answer } = await ask(voters({ a: 'Lyon', b: 'Paris', c: 'Paris' }), {
        aggregate: { model: 'judge-model', client },
      });
      expect(turn.reply).toBe('Paris');
      expect(answer?.annotations).toMatchObject({ aggregate: 'majority', judgeFailed: true });
      server.assertDone();
    } finally {
      await server.close();
    }
  });

  it('rejects unknown, duplicate or too few voters and a judge without a model at construction', () => {
    const agents = ['a', 'b'].map((name) => ({ name, description: name }));
    const attempts: ConsensusOrchestratorOptions[] = [
      { agents, voters: ['a', 'z'] },
      { agents, voters: ['a', 'a'] },
      { agents, voters: ['a'] },
      { agents, aggregate: { model: '' } },
    ];
    for (const options of attempts) {
      try {
        new ConsensusOrchestrator(options);
        expect.unreachable();
      } catch (error) {
        expect(ConfigurationError.isInstance(error), String(error)).toBe(true);
      }
    }
    expect(() => new ConsensusOrchestrator({ agents, voters: ['a', 'z'] })).toThrow(
      /'z' are not among its agents: a, b/,
    );
  });
});
