import {
  type AgentMeta,
  ConfigurationError,
  type Conversation,
  OrchestratorError,
  type ToolCall,
} from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { type TaskClassifier, type TaskDescription, TaskOrchestrator } from '../src/index.js';
import { describeRouterContract } from './router-contract.js';
import { DEMO_AGENTS, DEMO_TASKS } from './support/demo-agents.js';
import { TestSession, type TurnOutcome } from './support/turn-driver.js';

describeRouterContract('TaskOrchestrator', () => ({
  orchestrator: new TaskOrchestrator({ agents: DEMO_AGENTS, tasks: DEMO_TASKS }),
  routing: [
    { message: 'What time is it in Tokyo?', agent: 'clock' },
    { message: 'convert 5 miles to km', agent: 'converter' },
    { message: 'what is 12 + 30', agent: 'calculator' },
    { message: 'translate hello into French', agent: 'translator' },
  ],
}));

const agents: AgentMeta[] = [
  { name: 'billing', description: 'Answers invoice and payment questions' },
  { name: 'support', description: 'Fixes technical problems' },
  { name: 'concierge', description: 'Handles anything else' },
];

const tasks = {
  refund: {
    agent: 'billing',
    patterns: ['refund', 'money back', /\border\s+#?\d{4,}\b/i],
    description: 'Get a refund',
  },
  invoice: { agent: 'billing', patterns: ['invoice', 'receipt'] },
  outage: { agent: 'support', patterns: ['down', 'error', 'not working'], description: 'Report a problem' },
};

function send(orchestrator: TaskOrchestrator, message: string, candidates?: string[]): Promise<TurnOutcome> {
  return new TestSession({ orchestrator }).send(message, { candidates });
}

describe('TaskOrchestrator', () => {
  it('sends the message to the agent of the identified task, with the task as input', async () => {
    const outcome = await send(
      new TaskOrchestrator({ agents, tasks }),
      'I want my money back for order #12345',
    );
    expect(outcome.agentCalls[0]).toMatchObject({
      toolName: 'billing',
      message: 'I want my money back for order #12345',
      input: { task: 'refund' },
      reason: "task 'refund' is handled by billing",
    });
    expect(outcome.agentCalls[0]?.thought).toContain(
      "Identified task 'refund' (matched money back, /\\border\\s+#?\\d{4,}\\b/i)",
    );
    expect(outcome.reply).toBe('billing answered: I want my money back for order #12345');
  });

  it('gives equal scores to the task declared first', async () => {
    const outcome = await send(new TaskOrchestrator({ agents, tasks }), 'refund or invoice?');
    expect(outcome.agentCalls[0]?.input).toEqual({ task: 'refund' });
  });

  it('asks which task the user means, naming the available tasks', async () => {
    const outcome = await send(new TaskOrchestrator({ agents, tasks }), 'hello there');
    expect(outcome.agentCalls).toEqual([]);
    expect(outcome.reply).toBe(
      "I'm not sure what you need. I can help with:\n- refund: Get a refund\n- invoice: Answers invoice and payment questions\n- outage: Report a problem\nWhich of these would you like?",
    );
  });

  it('sends an unknown task to the fallback agent', async () => {
    const outcome = await send(
      new TaskOrchestrator({ agents, tasks, fallbackAgent: 'concierge' }),
      'book me a taxi',
    );
    expect(outcome.agentCalls[0]).toMatchObject({
      toolName: 'concierge',
      reason: 'unknown task; fallback agent',
    });
  });

  it('ignores tasks whose agent is not a candidate for this decision', async () => {
    const orchestrator = new TaskOrchestrator({ agents, tasks, fallbackAgent: 'concierge' });
    const outcome = await send(orchestrator, 'the site is down, can I get a refund?', [
      'support',
      'concierge',
    ]);
    expect(outcome.agentCalls[0]).toMatchObject({ toolName: 'support', input: { task: 'outage' } });
    const clarified = await send(orchestrator, 'I need a refund', ['support']);
    expect(clarified.agentCalls).toEqual([]);
    expect(clarified.reply).toContain('- outage: Report a problem');
    expect(clarified.reply).not.toContain('refund:');
  });

  it('identifies tasks with a pluggable classifier, offered only the candidate tasks', async () => {
    const seen: { message: string; tasks: TaskDescription[]; conversation?: Conversation }[] = [];
    const identifyTask: TaskClassifier = async (message, offered, conversation) => {
      seen.push({ message, tasks: offered, conversation });
      return message.includes('broken') ? 'outage' : 'refund';
    };
    const orchestrator = new TaskOrchestrator({ agents, tasks, identifyTask });
    const outcome = await send(orchestrator, 'my laptop is broken', ['support']);
    expect(outcome.agentCalls[0]).toMatchObject({ toolName: 'support', input: { task: 'outage' } });
    expect(seen[0]?.tasks).toEqual([{ name: 'outage', description: 'Report a problem', agent: 'support' }]);
    expect(seen[0]?.conversation?.hop).toBe(0);
    // The classifier's answer 'refund' is not available among these candidates: clarify instead.
    const clarified = await send(orchestrator, 'anything', ['support']);
    expect(clarified.agentCalls).toEqual([]);
    expect(clarified.decisions[0]).toMatchObject({
      thought: expect.stringContaining("'refund' is not an available task"),
    });
  });

  it('describes tasks with their own description, or else their agent’s', () => {
    expect(new TaskOrchestrator({ agents, tasks }).tasksFor()).toEqual([
      { name: 'refund', description: 'Get a refund', agent: 'billing' },
      { name: 'invoice', description: 'Answers invoice and payment questions', agent: 'billing' },
      { name: 'outage', description: 'Report a problem', agent: 'support' },
    ]);
  });

  it('never routes to an agent a classifier invents', async () => {
    const orchestrator = new TaskOrchestrator({ agents, tasks, identifyTask: () => 'launch-rockets' });
    const outcome = await send(orchestrator, 'go');
    expect(outcome.status).toBe('completed');
    expect(outcome.agentCalls).toEqual([]);
  });

  it('lets a subclass override identifyTask', async () => {
    class FirstWordTask extends TaskOrchestrator {
      protected override identifyTask(message: string) {
        return message.split(' ')[0];
      }
    }
    const outcome = await send(new FirstWordTask({ agents, tasks }), 'invoice please');
    expect((outcome.decisions[0] as ToolCall).input).toEqual({ task: 'invoice' });
  });

  it('ends the turn with an error, without internals, when the classifier throws', async () => {
    const identifyTask: TaskClassifier = async () => {
      throw new Error('model endpoint returned 502 at https://internal:8443/v1');
    };
    const outcome = await send(new TaskOrchestrator({ agents, tasks, identifyTask }), 'refund');
    expect(outcome.status).toBe('failed');
    expect(OrchestratorError.isInstance(outcome.error)).toBe(true);
    expect(outcome.reply).not.toContain('internal:8443');
  });

  it('fails at construction on configuration mistakes', () => {
    expect(() => new TaskOrchestrator({ agents, tasks: { refund: { agent: 'payments' } } })).toThrow(
      "Task 'refund' of orchestrator 'task' names unknown agent 'payments'; known agents: billing, support, concierge",
    );
    expect(() => new TaskOrchestrator({ agents, tasks: {} })).toThrow(ConfigurationError);
    expect(() => new TaskOrchestrator({ agents, tasks, fallbackAgent: 'nobody' })).toThrow(
      /Fallback agent 'nobody'/,
    );
    const badPattern = { refund: { agent: 'billing', patterns: [42] } } as unknown as typeof tasks;
    expect(() => new TaskOrchestrator({ agents, tasks: badPattern })).toThrow(/strings and RegExps/);
    expect(
      () => new TaskOrchestrator({ agents, tasks: { refund: { agent: 'billing', patterns: [''] } } }),
    ).toThrow(ConfigurationError);
    const notAFunction = 'llm' as unknown as TaskClassifier;
    expect(() => new TaskOrchestrator({ agents, tasks, identifyTask: notAFunction })).toThrow(
      /must be a function/,
    );
  });
});
