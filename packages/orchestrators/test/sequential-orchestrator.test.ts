import { ConfigurationError } from '@switchboard/core';
import { type Agent, defineAgent } from '@switchboard/runtime';
import { runConversation } from '@switchboard/runtime/testing';
import { describe, expect, it } from 'vitest';
import { SequentialOrchestrator } from '../src/index.js';
import { TestSession } from './support/turn-driver.js';

const SECRET = 'ECONNREFUSED 10.0.0.7:5432 at Pool.connect (/srv/app/db.js:12:7)';

/** Agents that transform their input and record what they were given. */
function pipelineAgents(received: string[][]): Agent[] {
  const stage = (name: string, transform: (text: string) => string) =>
    defineAgent({
      name,
      description: `${name} stage`,
      run: (message) => {
        received.push([name, message]);
        return transform(message);
      },
    });
  return [
    stage('draft', (text) => `draft of "${text}"`),
    stage('shout', (text) => text.toUpperCase()),
    stage('sign', (text) => `${text} -- signed`),
    stage('broken', () => {
      throw new Error(SECRET);
    }),
    stage('silent', () => '  '),
  ];
}

async function run(pipeline: string[], messages: string[]) {
  const received: string[][] = [];
  const agents = pipelineAgents(received);
  const orchestrator = new SequentialOrchestrator({
    agents: agents.map(({ name, description }) => ({ name, description })),
    pipeline,
  });
  const conversation = await runConversation({ orchestrator, agents, messages, logLevel: 'silent' });
  await conversation.app.close();
  return { ...conversation, received };
}

describe('SequentialOrchestrator', () => {
  it('passes the user message to the first stage and each output to the next, answering with the last', async () => {
    const { turns, received } = await run(['draft', 'shout', 'sign'], ['a note']);
    expect(received).toEqual([
      ['draft', 'a note'],
      ['shout', 'draft of "a note"'],
      ['sign', 'DRAFT OF "A NOTE"'],
    ]);
    expect(turns[0]?.status).toBe('completed');
    expect(turns[0]?.reply).toBe('DRAFT OF "A NOTE" -- signed');
  });

  it('records the stage of each call on its step', async () => {
    const { turns } = await run(['draft', 'shout', 'sign'], ['a note']);
    const steps = turns[0]?.steps ?? [];
    expect(steps.map((step) => [step.kind, step.calls[0]?.agent, step.annotations])).toEqual([
      ['call', 'draft', { stage: 1, stages: 3 }],
      ['call', 'shout', { stage: 2, stages: 3 }],
      ['call', 'sign', { stage: 3, stages: 3 }],
      ['answer', 'route_to_user', undefined],
    ]);
  });

  it('stops at a failed stage and tells the user which one, without the error text', async () => {
    const { turns, received } = await run(['draft', 'broken', 'sign'], ['a note']);
    const turn = turns[0]!;
    expect(received.map(([agent]) => agent)).toEqual(['draft', 'broken']);
    expect(turn.status).toBe('completed');
    expect(turn.reply).toMatch(/step 2 of 3 \(the broken agent\)/);
    expect(turn.reply).toMatch(/sorry/i);
    expect(turn.reply).not.toContain('ECONNREFUSED');
    expect(turn.reply).not.toContain('/srv/app');
    expect(turn.steps.at(-1)?.annotations).toEqual({ failedStage: 2, stages: 3 });
  });

  it('stops when a stage returns nothing rather than passing an empty text on', async () => {
    const { turns, received } = await run(['draft', 'silent', 'sign'], ['a note']);
    expect(received.map(([agent]) => agent)).toEqual(['draft', 'silent']);
    expect(turns[0]?.reply).toMatch(/step 2 of 3 \(the silent agent\) returned nothing/);
  });

  it('runs an agent named twice as two stages, and starts each turn at the first stage', async () => {
    const { turns, received } = await run(['shout', 'sign', 'sign'], ['one', 'two']);
    expect(turns.map((turn) => turn.reply)).toEqual(['ONE -- signed -- signed', 'TWO -- signed -- signed']);
    expect(received.map(([agent]) => agent)).toEqual(['shout', 'sign', 'sign', 'shout', 'sign', 'sign']);
  });

  it('skips the stages a wrapper does not offer, and never calls outside the candidates', async () => {
    const orchestrator = new SequentialOrchestrator({
      agents: ['draft', 'shout', 'sign'].map((name) => ({ name, description: name })),
    });
    const session = new TestSession({ orchestrator, agents: { shout: (text) => text.toUpperCase() } });
    const outcome = await session.send('hi', { candidates: ['draft', 'shout'] });
    expect(outcome.agentCalls.map((call) => call.toolName)).toEqual(['draft', 'shout']);
    expect(outcome.reply).toBe('DRAFT ANSWERED: HI');
    const none = await session.send('hi', { candidates: [] });
    expect(none.agentCalls).toEqual([]);
    expect(none.reply).toMatch(/not available|sorry/i);
  });

  it('rejects a pipeline naming an unknown agent, or an empty one, at construction', () => {
    const agents = [{ name: 'draft', description: 'd' }];
    expect(() => new SequentialOrchestrator({ agents, pipeline: ['draft', 'edit'] })).toThrow(
      /unknown agent\(s\) 'edit'; known agents: draft/,
    );
    try {
      new SequentialOrchestrator({ agents, pipeline: [] });
      expect.unreachable();
    } catch (error) {
      expect(ConfigurationError.isInstance(error)).toBe(true);
    }
  });
});
