import {
  InvalidDecisionError,
  isErrorMessage,
  MaxHopsExceededError,
  type Orchestrator,
  ROUTE_TO_USER,
  UnknownAgentError,
} from '@switchboard/core';
import { InMemoryMemoryStore } from '@switchboard/runtime';
import { describe, expect, it } from 'vitest';
import { type FakeAgent, TestSession, type TurnOutcome } from './support/turn-driver.js';

/** A user message and the agent a content-based router must send it to. */
export interface RoutingExample {
  message: string;
  agent: string;
}

/** What a router under contract provides. */
export interface RouterContractFixture {
  orchestrator: Orchestrator;
  /**
   * How the router chooses: messages with the agent each must reach (at least
   * two examples for two different agents), `'rotation'` for a router that
   * takes agents in turn regardless of content, or `{ fixed }` for a pattern
   * whose every turn starts with the same agents (a pipeline's first stage, a
   * consensus's voters), in that order.
   */
  routing: readonly RoutingExample[] | 'rotation' | { fixed: readonly string[] };
  /** Releases what the setup started (a scripted model server, …). */
  close?: () => void | Promise<void>;
}

/**
 * Which contract test is about to run, so a setup that must script its
 * dependencies (a scripted model server) knows what comes:
 * - `routes`: each example (or 2 × agents rotation turns), one turn each;
 * - `answers`: the first example's turn, its agent replying with a unique text;
 * - `next-turn`: the first two examples, one after the other in one session;
 * - `agent-error`: the first example's turn, its agent throwing;
 * - `narrowed`: each example with the candidates narrowed to its agent alone,
 *   then to every other agent, then three messages nothing should match
 *   (rotation: 2 × (agents − 1) turns narrowed to all agents but the last).
 */
export interface ContractScenario {
  test: 'routes' | 'answers' | 'next-turn' | 'agent-error' | 'narrowed';
}

/** Builds a fresh router (and whatever it needs) for one contract test. */
export type RouterContractSetup = (
  scenario: ContractScenario,
) => RouterContractFixture | Promise<RouterContractFixture>;

const NONSENSE = ['zxqv blorp', '…', 'ok'];
const SECRET = 'ECONNREFUSED 10.0.0.7:5432\n    at Pool.connect (/srv/app/db.js:12:7)';

async function withFixture(
  setup: RouterContractSetup,
  test: ContractScenario['test'],
  body: (fixture: RouterContractFixture) => Promise<void>,
): Promise<void> {
  const fixture = await setup({ test });
  try {
    await body(fixture);
  } finally {
    await fixture.close?.();
  }
}

function examplesOf(fixture: RouterContractFixture): readonly RoutingExample[] {
  const { routing } = fixture;
  if (!Array.isArray(routing)) return [];
  expect(
    new Set(routing.map((example) => example.agent)).size,
    'the setup needs examples for two agents',
  ).toBeGreaterThan(1);
  return routing;
}

/** The agents every turn of a `{ fixed }` pattern starts with, or undefined for other routers. */
function fixedStart(fixture: RouterContractFixture): readonly string[] | undefined {
  const { routing } = fixture;
  return typeof routing === 'object' && !Array.isArray(routing)
    ? (routing as { fixed: readonly string[] }).fixed
    : undefined;
}

/** Agents that answer with a recognisable text naming themselves. */
function tokenAgents(orchestrator: Orchestrator, token: string): Record<string, FakeAgent> {
  return Object.fromEntries(orchestrator.agents.map(({ name }) => [name, () => `${name} says ${token}`]));
}

/** Fails when a decision of the turn named an agent outside the candidates, or was malformed. */
function expectOnlyCandidates(outcome: TurnOutcome): void {
  const allowed = new Set([ROUTE_TO_USER, ...outcome.candidates.map((agent) => agent.name)]);
  for (const decision of outcome.decisions) {
    if (isErrorMessage(decision)) {
      expect(UnknownAgentError.isInstance(decision.error), decision.error.message).toBe(false);
      expect(InvalidDecisionError.isInstance(decision.error), decision.error.message).toBe(false);
      continue;
    }
    for (const call of Array.isArray(decision) ? decision : [decision])
      expect(allowed).toContain(call.toolName);
  }
}

/**
 * The behaviour every router must show, run in-process through
 * {@link TestSession}: it routes a clear message to the right agent (or
 * rotates), answers the user with the agent's reply, turns an agent failure
 * into a clear answer, starts each turn afresh, and never routes outside the
 * decision's candidate agents.
 *
 * @example
 * ```ts
 * describeRouterContract('KeywordOrchestrator', () => ({
 *   orchestrator: new KeywordOrchestrator({ agents }),
 *   routing: [{ message: 'what time is it?', agent: 'clock' }, { message: '2 + 2', agent: 'calculator' }],
 * }));
 * ```
 */
export function describeRouterContract(name: string, setup: RouterContractSetup): void {
  describe(`router contract: ${name}`, () => {
    it('routes a clear message to the right agent (or rotates through every agent in order)', async () => {
      await withFixture(setup, 'routes', async (fixture) => {
        const { orchestrator } = fixture;
        if (fixture.routing === 'rotation') {
          const memory = new InMemoryMemoryStore();
          const names = orchestrator.agents.map((agent) => agent.name);
          const picks: (string | undefined)[] = [];
          for (let turn = 0; turn < names.length * 2; turn++) {
            const session = new TestSession({ orchestrator, memory });
            picks.push((await session.send(`message ${turn}`)).agentCalls[0]?.toolName);
          }
          const start = names.indexOf(picks[0] ?? '');
          expect(picks).toEqual(picks.map((_, turn) => names[(start + turn) % names.length]));
          return;
        }
        const fixed = fixedStart(fixture);
        if (fixed) {
          for (const message of ['first message', 'another message entirely']) {
            const outcome = await new TestSession({ orchestrator }).send(message);
            expect(outcome.agentCalls.slice(0, fixed.length).map((call) => call.toolName)).toEqual(fixed);
          }
          return;
        }
        for (const { message, agent } of examplesOf(fixture)) {
          const outcome = await new TestSession({ orchestrator }).send(message);
          expect(outcome.agentCalls[0]?.toolName, `"${message}" should reach ${agent}`).toBe(agent);
        }
      });
    });

    it("answers the user with the agent's reply", async () => {
      await withFixture(setup, 'answers', async (fixture) => {
        const { orchestrator } = fixture;
        const message = examplesOf(fixture)[0]?.message ?? 'hello there';
        const session = new TestSession({
          orchestrator,
          agents: tokenAgents(orchestrator, 'the answer is 4217'),
        });
        const outcome = await session.send(message);
        expect(outcome.status).toBe('completed');
        expect(outcome.agentCalls.length).toBeGreaterThan(0);
        expect(outcome.reply).toContain('4217');
        expectOnlyCandidates(outcome);
      });
    });

    it('starts each new turn afresh after answering the previous one', async () => {
      await withFixture(setup, 'next-turn', async (fixture) => {
        const { orchestrator } = fixture;
        const examples = examplesOf(fixture);
        const session = new TestSession({ orchestrator, agents: tokenAgents(orchestrator, 'token-77') });
        const first = await session.send(examples[0]?.message ?? 'first message');
        const second = await session.send(examples[1]?.message ?? 'second message');
        for (const outcome of [first, second]) {
          expect(outcome.status).toBe('completed');
          expect(outcome.reply).toContain('token-77');
        }
        const fixed = fixedStart(fixture);
        if (fixed) {
          // Afresh: the second turn starts over with the same agents instead of going on from the first.
          for (const outcome of [first, second]) {
            expect(outcome.agentCalls.slice(0, fixed.length).map((call) => call.toolName)).toEqual(fixed);
          }
        } else if (examples[1]) expect(second.agentCalls[0]?.toolName).toBe(examples[1].agent);
        else expect(second.agentCalls[0]?.toolName).not.toBe(first.agentCalls[0]?.toolName);
      });
    });

    it('gives the user a clear answer, without internals, when the agent fails', async () => {
      await withFixture(setup, 'agent-error', async (fixture) => {
        const { orchestrator } = fixture;
        const failing: FakeAgent = () => {
          throw new Error(SECRET);
        };
        const agents = Object.fromEntries(orchestrator.agents.map(({ name }) => [name, failing]));
        const message = examplesOf(fixture)[0]?.message ?? 'hello there';
        const outcome = await new TestSession({ orchestrator, agents }).send(message);
        expect(outcome.agentCalls.length).toBeGreaterThan(0);
        expect(MaxHopsExceededError.isInstance(outcome.error), outcome.error?.message).toBe(false);
        expect(outcome.error?.message ?? '').not.toMatch(/within \d+ (routing )?hops/);
        expect(outcome.reply.trim()).not.toBe('');
        expect(outcome.reply).toMatch(/sorry|fail|could not|couldn't|unable|problem|error/i);
        expect(outcome.reply).not.toContain('ECONNREFUSED');
        expect(outcome.reply).not.toContain('/srv/app');
        expectOnlyCandidates(outcome);
      });
    });

    it('never routes outside the candidate agents, even when a wrapper narrows them', async () => {
      await withFixture(setup, 'narrowed', async (fixture) => {
        const { orchestrator } = fixture;
        const names = orchestrator.agents.map((agent) => agent.name);
        const memory = new InMemoryMemoryStore();
        const send = (message: string, candidates?: readonly string[]) =>
          new TestSession({ orchestrator, memory }).send(message, { candidates });
        if (fixedStart(fixture)) {
          // Without the last agent: the pattern runs with what it is offered and never calls it.
          const [left] = names.slice(-1);
          const subset = names.slice(0, -1);
          for (const message of ['first message', ...NONSENSE]) {
            const outcome = await send(message, subset);
            expectOnlyCandidates(outcome);
            expect(outcome.agentCalls.map((call) => call.toolName)).not.toContain(left);
          }
          return;
        }
        if (fixture.routing === 'rotation') {
          const subset = names.slice(0, Math.max(1, names.length - 1));
          const picks = new Set<string | undefined>();
          for (let turn = 0; turn < subset.length * 2; turn++) {
            const outcome = await send(`message ${turn}`, subset);
            expectOnlyCandidates(outcome);
            picks.add(outcome.agentCalls[0]?.toolName);
          }
          expect([...picks].sort()).toEqual([...subset].sort());
          return;
        }
        for (const { message, agent } of examplesOf(fixture)) {
          const alone = await send(message, [agent]);
          expectOnlyCandidates(alone);
          expect(alone.agentCalls[0]?.toolName).toBe(agent);
          const others = await send(
            message,
            names.filter((other) => other !== agent),
          );
          expectOnlyCandidates(others);
          expect(others.agentCalls.map((call) => call.toolName)).not.toContain(agent);
        }
        for (const message of NONSENSE) expectOnlyCandidates(await send(message));
      });
    });
  });
}
