import { type AgentLike, type AgentMeta, ConfigurationError, routeToUser } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AGENTS, ScriptedOrchestrator } from './fixtures.js';

function construct(agents: unknown, name = 'router'): () => ScriptedOrchestrator {
  return () => new ScriptedOrchestrator(() => routeToUser('hi'), { name, agents: agents as AgentMeta[] });
}

function constructionError(agents: unknown, name = 'router'): Error {
  try {
    construct(agents, name)();
  } catch (error) {
    expect(ConfigurationError.isInstance(error)).toBe(true);
    return error as Error;
  }
  throw new Error('expected construction to fail');
}

describe('AbstractOrchestrator construction', () => {
  it('accepts valid agents and exposes them', () => {
    const orchestrator = construct(AGENTS)();
    expect(orchestrator.name).toBe('router');
    expect(orchestrator.agents.map((agent) => agent.name)).toEqual(['calculator', 'clock', 'converter']);
  });

  it('keeps its own frozen copy of the agents', () => {
    const agents: AgentMeta[] = [{ name: 'calculator', description: 'math' }];
    const orchestrator = construct(agents)();
    agents.push({ name: 'late', description: 'added after construction' });
    expect(orchestrator.agents.map((agent) => agent.name)).toEqual(['calculator']);
    expect(Object.isFrozen(orchestrator.agents)).toBe(true);
  });

  it('rejects duplicate agent names, naming the orchestrator and the agent', () => {
    const error = constructionError([
      { name: 'clock', description: 'a' },
      { name: 'calculator', description: 'b' },
      { name: 'clock', description: 'c' },
    ]);
    expect(error.message).toBe(
      "Orchestrator 'router' has two agents named 'clock'; agent names must be unique",
    );
  });

  it('rejects an agent named route_to_user because the name is reserved', () => {
    const error = constructionError([{ name: 'route_to_user', description: 'impostor' }]);
    expect(error.message).toContain("'route_to_user' is reserved");
  });

  it.each([
    ['an empty name', ''],
    ['a name with a space', 'unit converter'],
    ['a name with a dot', 'tools.clock'],
    ['a name with non-ASCII letters', 'météo'],
    ['a name longer than 64 characters', 'a'.repeat(65)],
  ])('rejects %s with a message naming the orchestrator and the agent', (_label, name) => {
    const error = constructionError([{ name, description: 'x' }]);
    expect(error.message).toContain(`Orchestrator 'router' has an invalid agent '${name}'`);
    expect(error.message).toContain('name');
  });

  it('explains the allowed characters of an agent name', () => {
    const error = constructionError([{ name: 'a b', description: 'x' }]);
    expect(error.message).toContain('agent names use letters, digits, _ and - only');
  });

  it('rejects an agent without a description', () => {
    const error = constructionError([{ name: 'clock' }]);
    expect(error.message).toContain("invalid agent 'clock'");
    expect(error.message).toContain('description');
  });

  it.each([
    ['null', null],
    ['a number', 3],
    ['a string', 'clock'],
  ])('rejects an agent that is %s', (_label, agent) => {
    const error = constructionError([agent]);
    expect(error.message).toContain("Orchestrator 'router' has an invalid agent");
  });

  it('rejects agents that are not an array', () => {
    const error = constructionError({ clock: { description: 'x' } });
    expect(error.message).toBe("Orchestrator 'router' needs an agents array");
  });

  it('rejects an orchestrator without a name', () => {
    const error = constructionError(AGENTS, '');
    expect(error.message).toBe('An orchestrator needs a name');
  });

  it('fails at construction, before any decision is asked for', () => {
    let decisions = 0;
    expect(
      () =>
        new ScriptedOrchestrator(
          () => {
            decisions++;
            return routeToUser('hi');
          },
          { agents: [AGENTS[0]!, AGENTS[0]!] },
        ),
    ).toThrow(/must be unique/);
    expect(decisions).toBe(0);
  });

  it('takes an agent with an approval rule, schemas and run, and keeps only its metadata', () => {
    const refunds = {
      name: 'refunds',
      description: 'Refunds orders',
      keywords: ['refund'],
      requiresApproval: (call: { message: string }) => call.message.includes('000'),
      input: z.object({ amount: z.number() }),
      run: (message: string) => message,
    };
    const agents: AgentLike[] = [
      refunds,
      { name: 'clock', description: 'Tells the time', requiresApproval: false },
    ];
    const orchestrator = construct(agents)();
    expect(orchestrator.agents).toEqual([
      {
        name: 'refunds',
        description: 'Refunds orders',
        keywords: ['refund'],
        requiresApproval: true,
        inputSchema: expect.objectContaining({ type: 'object', required: ['amount'] }),
      },
      { name: 'clock', description: 'Tells the time', requiresApproval: false },
    ]);
  });

  it('keeps the metadata it is given as it is', () => {
    const agents: AgentMeta[] = [
      {
        name: 'search',
        description: 'Searches',
        capabilities: ['web'],
        metadata: { team: 'docs' },
        inputSchema: { type: 'string' },
        outputSchema: { type: 'string' },
      },
    ];
    expect(construct(agents)().agents).toEqual(agents);
  });

  it('accepts names with letters, digits, underscores and hyphens up to 64 characters', () => {
    const names = ['a', 'Agent_2', 'unit-converter', 'x'.repeat(64)];
    const orchestrator = construct(names.map((name) => ({ name, description: 'ok' })))();
    expect(orchestrator.agents.map((agent) => agent.name)).toEqual(names);
  });
});
