import { type AgentMeta, ConfigurationError, StoreUnavailableError } from '@switchboard/core';
import { InMemoryMemoryStore } from '@switchboard/runtime';
import { describe, expect, it } from 'vitest';
import { RoundRobinOrchestrator } from '../src/index.js';
import { describeRouterContract } from './router-contract.js';
import { DEMO_AGENTS } from './support/demo-agents.js';
import { failingMemory, TestSession } from './support/turn-driver.js';

describeRouterContract('RoundRobinOrchestrator', () => ({
  orchestrator: new RoundRobinOrchestrator({ agents: DEMO_AGENTS }),
  routing: 'rotation',
}));

const agents: AgentMeta[] = ['north', 'east', 'south', 'west'].map((name) => ({
  name,
  description: `The ${name} desk`,
}));

async function picks(sessions: TestSession[], turns: number): Promise<string[]> {
  const chosen: string[] = [];
  for (let turn = 0; turn < turns; turn++) {
    const outcome = await sessions[turn % sessions.length]!.send(`request ${turn}`);
    chosen.push(outcome.agentCalls[0]?.toolName ?? 'none');
  }
  return chosen;
}

describe('RoundRobinOrchestrator', () => {
  it('spreads 300 concurrent turns from 3 replicas sharing one store within ±1 per agent', async () => {
    const shared = new InMemoryMemoryStore();
    const replicas = Array.from({ length: 3 }, () => new RoundRobinOrchestrator({ name: 'desk', agents }));
    // 30 sessions of 10 turns, each session served by the replicas in turn, all sessions at once.
    const counts = new Map<string, number>();
    await Promise.all(
      Array.from({ length: 30 }, async (_, sessionIndex) => {
        for (let turn = 0; turn < 10; turn++) {
          const orchestrator = replicas[(sessionIndex + turn) % replicas.length]!;
          const session = new TestSession({
            orchestrator,
            memory: shared,
            sessionId: `s${sessionIndex}`,
          });
          const outcome = await session.send(`turn ${turn}`);
          const agent = outcome.agentCalls[0]?.toolName ?? 'none';
          counts.set(agent, (counts.get(agent) ?? 0) + 1);
        }
      }),
    );
    const values = agents.map((agent) => counts.get(agent.name) ?? 0);
    expect(values.reduce((a, b) => a + b, 0)).toBe(300);
    expect(Math.max(...values) - Math.min(...values)).toBeLessThanOrEqual(1);
    expect(await shared.get('app', 'round-robin:desk')).toBe(300);
  });

  it('continues the rotation across sessions with the default app scope', async () => {
    const orchestrator = new RoundRobinOrchestrator({ agents });
    const memory = new InMemoryMemoryStore();
    const sessions = [1, 2, 3].map((n) => new TestSession({ orchestrator, memory, sessionId: `app-${n}` }));
    expect(await picks(sessions, 6)).toEqual(['north', 'east', 'south', 'west', 'north', 'east']);
  });

  it('rotates within each conversation with the session scope', async () => {
    const orchestrator = new RoundRobinOrchestrator({ agents, scope: 'session' });
    const memory = new InMemoryMemoryStore();
    const first = new TestSession({ orchestrator, memory });
    const second = new TestSession({ orchestrator, memory });
    expect(await picks([first], 2)).toEqual(['north', 'east']);
    expect(await picks([second], 2)).toEqual(['north', 'east']);
    expect(await picks([first], 1)).toEqual(['south']);
  });

  it('keeps separate rotations for separate counter keys', async () => {
    const memory = new InMemoryMemoryStore();
    const a = new RoundRobinOrchestrator({ agents, counterKey: 'rotation-a' });
    const b = new RoundRobinOrchestrator({ agents, counterKey: 'rotation-b' });
    expect(await picks([new TestSession({ orchestrator: a, memory })], 2)).toEqual(['north', 'east']);
    expect(await picks([new TestSession({ orchestrator: b, memory })], 1)).toEqual(['north']);
  });

  it('rotates only among the candidates a wrapper allows', async () => {
    const orchestrator = new RoundRobinOrchestrator({ agents });
    const session = new TestSession({ orchestrator });
    const chosen: (string | undefined)[] = [];
    for (let turn = 0; turn < 4; turn++) {
      chosen.push((await session.send('hi', { candidates: ['east', 'west'] })).agentCalls[0]?.toolName);
    }
    expect(chosen).toEqual(['east', 'west', 'east', 'west']);
  });

  it('records the counter on the decision', async () => {
    const outcome = await new TestSession({ orchestrator: new RoundRobinOrchestrator({ agents }) }).send(
      'hi',
    );
    expect(outcome.agentCalls[0]).toMatchObject({
      toolName: 'north',
      message: 'hi',
      reason: 'round-robin turn 1',
    });
    expect(outcome.agentCalls[0]?.thought).toContain(
      "Counter 'round-robin:round-robin' (app memory) is at 1",
    );
  });

  it('restarts the rotation when the stored counter is not a number', async () => {
    const shared = new InMemoryMemoryStore();
    await shared.set('app', 'round-robin:round-robin', 'garbage');
    const orchestrator = new RoundRobinOrchestrator({ agents });
    expect(await picks([new TestSession({ orchestrator, memory: shared })], 2)).toEqual(['north', 'east']);
  });

  it('ends the turn with a clear error when memory is unavailable', async () => {
    const orchestrator = new RoundRobinOrchestrator({ agents });
    const down = new StoreUnavailableError({ message: 'Redis did not answer within 2000 ms' });
    const outcome = await new TestSession({ orchestrator, memory: failingMemory(down) }).send('hi');
    expect(outcome.status).toBe('failed');
    expect(outcome.agentCalls).toEqual([]);
    expect(outcome.reply).toBe(
      'Sorry, I cannot pick an agent right now because shared memory is unavailable. Please try again shortly.',
    );
    expect(StoreUnavailableError.isInstance(outcome.error)).toBe(true);
    expect(outcome.error?.message).toBe(
      "Round-robin orchestrator 'round-robin' could not advance its counter 'round-robin:round-robin' in app memory: Redis did not answer within 2000 ms",
    );
  });

  it('ends the turn with a clear error when no candidate agent is left', async () => {
    const outcome = await new TestSession({ orchestrator: new RoundRobinOrchestrator({ agents }) }).send(
      'hi',
      { candidates: [] },
    );
    expect(outcome.status).toBe('failed');
    expect(outcome.reply).toBe('Sorry, no agent is available to answer right now.');
  });

  it('fails at construction on an unsupported scope or an empty key', () => {
    const scope = 'user' as 'app';
    expect(() => new RoundRobinOrchestrator({ agents, scope })).toThrow(ConfigurationError);
    expect(() => new RoundRobinOrchestrator({ agents, counterKey: '' })).toThrow(/counterKey/);
  });
});
