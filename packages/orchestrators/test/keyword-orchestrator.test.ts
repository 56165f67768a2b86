import {
  type AgentMeta,
  ConfigurationError,
  type Conversation,
  type Orchestrator,
  type OrchestratorOptions,
  type ToolCall,
  type ToolMessage,
  toolCall,
} from '@switchboard/core';
import { describe, expect, it, vi } from 'vitest';
import { KeywordOrchestrator } from '../src/index.js';
import { describeRouterContract } from './router-contract.js';
import { DEMO_AGENTS } from './support/demo-agents.js';
import { TestSession } from './support/turn-driver.js';

describeRouterContract('KeywordOrchestrator', () => ({
  orchestrator: new KeywordOrchestrator({ agents: DEMO_AGENTS }),
  routing: [
    { message: 'What time is it in Tokyo?', agent: 'clock' },
    { message: 'convert 5 miles to km', agent: 'converter' },
    { message: 'what is 12 plus 30', agent: 'calculator' },
    { message: 'translate hello into French', agent: 'translator' },
  ],
}));

const agents: AgentMeta[] = [
  { name: 'writer', description: 'Drafts short texts', keywords: ['write', 'draft'] },
  { name: 'reviewer', description: 'Reviews texts', keywords: ['review', 'draft'] },
  { name: 'help', description: 'Explains what I can do' },
];

async function firstCall(
  orchestrator: Orchestrator,
  message: string,
  candidates?: string[],
): Promise<ToolCall> {
  const outcome = await new TestSession({ orchestrator }).send(message, { candidates });
  const decision = outcome.decisions[0];
  if (!decision || Array.isArray(decision) || 'error' in decision)
    throw new Error('expected a single tool call');
  return decision;
}

describe('KeywordOrchestrator', () => {
  it('routes with the agents’ own keywords and records why', async () => {
    const call = await firstCall(new KeywordOrchestrator({ agents }), 'Please WRITE a haiku');
    expect(call).toMatchObject({ toolName: 'writer', message: 'Please WRITE a haiku' });
    expect(call.reason).toBe('matched keywords: write');
    expect(call.thought).toContain('writer 1 (write)');
  });

  it('lets an explicit keyword map replace an agent’s keywords', async () => {
    const orchestrator = new KeywordOrchestrator({
      agents,
      keywords: { help: ['help', 'what can you do'], writer: ['compose'] },
    });
    expect((await firstCall(orchestrator, 'what can you do?')).toolName).toBe('help');
    expect((await firstCall(orchestrator, 'compose a poem')).toolName).toBe('writer');
    expect((await firstCall(orchestrator, 'write a poem')).toolName).toBe('route_to_user');
  });

  it('gives ties to the agent declared first, among the candidates', async () => {
    expect((await firstCall(new KeywordOrchestrator({ agents }), 'a draft')).toolName).toBe('writer');
    const reversed = new KeywordOrchestrator({ agents: [...agents].reverse() });
    expect((await firstCall(reversed, 'a draft')).toolName).toBe('reviewer');
    expect((await firstCall(new KeywordOrchestrator({ agents }), 'a draft', ['reviewer'])).toolName).toBe(
      'reviewer',
    );
  });

  it('prefers the agent with more (and longer) matches', async () => {
    const orchestrator = new KeywordOrchestrator({
      agents,
      keywords: { writer: ['draft'], reviewer: ['review', 'review my draft'] },
    });
    expect((await firstCall(orchestrator, 'can you review my draft')).toolName).toBe('reviewer');
  });

  it('sends unmatched messages to the fallback agent while it is a candidate', async () => {
    const orchestrator = new KeywordOrchestrator({ agents, fallbackAgent: 'help' });
    const call = await firstCall(orchestrator, 'good morning');
    expect(call).toMatchObject({ toolName: 'help', reason: 'no keyword matched; fallback agent' });
    const narrowed = await firstCall(orchestrator, 'good morning', ['writer', 'reviewer']);
    expect(narrowed.toolName).toBe('route_to_user');
  });

  it('asks a clarifying question naming what the candidate agents do', async () => {
    const orchestrator = new KeywordOrchestrator({ agents });
    const outcome = await new TestSession({ orchestrator }).send('good morning', {
      candidates: ['writer', 'help'],
    });
    expect(outcome.status).toBe('completed');
    expect(outcome.agentCalls).toEqual([]);
    expect(outcome.reply).toContain('writer: Drafts short texts');
    expect(outcome.reply).toContain('help: Explains what I can do');
    expect(outcome.reply).not.toContain('reviewer');
    expect(outcome.reply).toMatch(/\?$/);
  });

  it('answers with a safe message naming the agent that failed', async () => {
    const orchestrator = new KeywordOrchestrator({ agents });
    const session = new TestSession({
      orchestrator,
      agents: {
        writer: () => {
          throw new TypeError("Cannot read properties of undefined (reading 'model') at /app/writer.js:3:9");
        },
      },
    });
    const outcome = await session.send('write a poem');
    expect(outcome.status).toBe('completed');
    expect(outcome.reply).toBe(
      'Sorry, the writer agent ran into a problem and could not answer. Please try again in a moment.',
    );
    const answer = outcome.decisions.at(-1) as ToolCall;
    expect(answer.reason).toBe('agent failed: writer');
  });

  it('lets a subclass chain agents through afterAgent before answering the user', async () => {
    class DraftThenReview extends KeywordOrchestrator {
      protected override afterAgent(conversation: Conversation, results: readonly ToolMessage[]) {
        const reply = results.at(-1);
        if (reply?.name === 'writer' && reply.status === 'ok') return toolCall('reviewer', reply.content);
        return super.afterAgent(conversation, reply ? [reply] : results);
      }
    }
    const session = new TestSession({
      orchestrator: new DraftThenReview({ agents }),
      agents: { writer: () => 'roses are red', reviewer: (text) => `Reviewed: ${text.toUpperCase()}` },
    });
    const outcome = await session.send('write a poem');
    expect(outcome.agentCalls.map((call) => call.toolName)).toEqual(['writer', 'reviewer']);
    expect(outcome.reply).toBe('Reviewed: ROSES ARE RED');
  });

  it('joins the replies of a fan-out, in call order', async () => {
    class BothAgents extends KeywordOrchestrator {
      protected override selectAgent() {
        return [toolCall('writer', 'a'), toolCall('reviewer', 'b')];
      }
    }
    const session = new TestSession({
      orchestrator: new BothAgents({ agents }),
      agents: {
        writer: () => 'first',
        reviewer: () => {
          throw new Error('boom');
        },
      },
    });
    const outcome = await session.send('anything');
    expect(outcome.reply).toBe(
      'first\n\nSorry, the reviewer agent ran into a problem and could not answer. Please try again in a moment.',
    );
  });

  it('fails at construction on configuration mistakes', () => {
    expect(() => new KeywordOrchestrator({ agents, keywords: { writter: ['write'] } })).toThrow(
      ConfigurationError,
    );
    expect(() => new KeywordOrchestrator({ agents, keywords: { writter: ['write'] } })).toThrow(
      "Keyword map of orchestrator 'keyword' names unknown agent(s) 'writter'; known agents: writer, reviewer, help",
    );
    expect(() => new KeywordOrchestrator({ agents, fallbackAgent: 'helper' })).toThrow(
      /Fallback agent 'helper'/,
    );
    expect(() => new KeywordOrchestrator({ agents, keywords: { writer: [' '] } })).toThrow(
      ConfigurationError,
    );
    const notAList = { writer: 'write' } as unknown as Record<string, string[]>;
    expect(() => new KeywordOrchestrator({ agents, keywords: notAList })).toThrow(
      /must be an array of strings/,
    );
  });

  it('accepts agents without keywords silently', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      expect(
        () => new KeywordOrchestrator({ agents: [{ name: 'quiet', description: 'No keywords' }] }),
      ).not.toThrow();
      expect(warn).not.toHaveBeenCalled();
      expect(error).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
      error.mockRestore();
    }
  });

  it('can be given to an app as a class, constructed with only name and agents', async () => {
    const OrchestratorClass: new (options: OrchestratorOptions) => Orchestrator = KeywordOrchestrator;
    const orchestrator = new OrchestratorClass({ name: 'app', agents });
    expect(orchestrator.name).toBe('app');
    expect((await firstCall(orchestrator, 'review this')).toolName).toBe('reviewer');
  });
});
