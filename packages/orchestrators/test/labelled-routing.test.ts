import type { Orchestrator } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { KeywordOrchestrator, TaskOrchestrator } from '../src/index.js';
import { HELD_OUT_MESSAGES, LABELLED_MESSAGES, type LabelledMessage } from './labelled-messages.js';
import { DEMO_AGENTS, DEMO_TASKS } from './support/demo-agents.js';
import { TestSession } from './support/turn-driver.js';

interface Accuracy {
  correct: number;
  total: number;
  misses: string[];
}

/** Runs each message as the first turn of a fresh session; `null` labels expect no agent call. */
async function measure(orchestrator: Orchestrator, messages: readonly LabelledMessage[]): Promise<Accuracy> {
  const misses: string[] = [];
  for (const { message, agent } of messages) {
    const outcome = await new TestSession({ orchestrator }).send(message);
    const routed = outcome.agentCalls[0]?.toolName ?? null;
    if (routed !== agent)
      misses.push(
        `"${message}": expected ${agent ?? 'a clarifying question'}, got ${routed ?? 'a clarifying question'}`,
      );
  }
  return { correct: messages.length - misses.length, total: messages.length, misses };
}

function report(label: string, { correct, total, misses }: Accuracy): number {
  const accuracy = correct / total;
  console.log(
    `${label}: ${correct}/${total} = ${(accuracy * 100).toFixed(1)}%${misses.map((miss) => `\n  miss ${miss}`).join('')}`,
  );
  return accuracy;
}

const routers: [string, () => Orchestrator][] = [
  ['keyword router', () => new KeywordOrchestrator({ agents: DEMO_AGENTS })],
  ['task router', () => new TaskOrchestrator({ agents: DEMO_AGENTS, tasks: DEMO_TASKS })],
];

describe('routing accuracy on the labelled set', () => {
  it('covers at least 60 messages over at least 5 agents', () => {
    expect(LABELLED_MESSAGES.length).toBeGreaterThanOrEqual(60);
    const labelled = new Set(
      LABELLED_MESSAGES.map((example) => example.agent).filter((agent) => agent !== null),
    );
    expect(labelled.size).toBeGreaterThanOrEqual(5);
    for (const agent of labelled) expect(DEMO_AGENTS.map((meta) => meta.name)).toContain(agent);
  });

  for (const [label, create] of routers) {
    it(`${label} routes at least 95% of the labelled messages correctly`, async () => {
      expect(
        report(`${label}, labelled set`, await measure(create(), LABELLED_MESSAGES)),
      ).toBeGreaterThanOrEqual(0.95);
    });

    it(`${label} stays above 80% on messages written after its configuration was frozen`, async () => {
      expect(
        report(`${label}, held-out set`, await measure(create(), HELD_OUT_MESSAGES)),
      ).toBeGreaterThanOrEqual(0.8);
    });
  }
});
