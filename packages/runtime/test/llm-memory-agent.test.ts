import {
  ConfigurationError,
  type Conversation,
  type MessageItem,
  RequestContext,
  toolCall,
} from '@switchboard/core';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AgentContext, AgentReply, AgentReplyWithMetadata } from '../src/agents/agent.js';
import { type LlmAgentOptions, llmAgent } from '../src/agents/llm-agent.js';
import { estimateRequestTokens, TRUNCATION_NOTE } from '../src/agents/llm-token-estimate.js';
import { llmTool } from '../src/agents/llm-tool.js';
import { InMemoryMemoryStore } from '../src/stores/in-memory-memory-store.js';
import { bindMemory } from '../src/stores/memory-binding.js';
import { createScriptedModelServer, type ScriptedModelServer } from '../src/testing/scripted-model-server.js';
import type { RecordedRequest, ScriptEntry } from '../src/testing/scripted-script.js';

let server: ScriptedModelServer;
let client: OpenAI;
afterEach(async () => server?.close());

async function script(entries: ScriptEntry[]) {
  server = await createScriptedModelServer({ script: entries });
  client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
}

const base = { description: 'Test agent', model: 'm', instructions: 'Be brief.' };
const agentOf = (options: Partial<LlmAgentOptions>) =>
  llmAgent({ name: 'agent', ...base, client, ...options });

const add = llmTool({
  name: 'add',
  description: 'Adds two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

/** A session of alternating user and assistant messages; the last user message starts the current turn. */
function conversationOf(contents: readonly string[]): Conversation {
  const messages: MessageItem[] = contents.map((content, index) =>
    index % 2 === 0
      ? { id: `m${index}`, role: 'user', content, createdAt: '2025-01-01T00:00:00Z' }
      : {
          id: `m${index}`,
          role: 'assistant',
          content,
          toolCallId: `c${index}`,
          createdAt: '2025-01-01T00:00:00Z',
        },
  );
  return { sessionId: 's', turnId: 't', messages, turnStart: messages.length - 1, hop: 0, agents: [] };
}

const store = new InMemoryMemoryStore();
afterEach(() => store.clear('session:s'));

function contextOf(conversation: Conversation): AgentContext {
  const signal = new AbortController().signal;
  const request = new RequestContext({
    sessionId: 's',
    requestId: 'r',
    signal,
    memory: (scope) => bindMemory(store, scope, 'session:s'),
  });
  const call = toolCall('agent', 'task');
  return { signal, toolCall: call, conversation, request, idempotencyKey: `turn/${call.id}` };
}

/** Runs the agent and collects its deltas and the metadata its stream returns. */
async function run(
  agent: ReturnType<typeof llmAgent>,
  message: string,
  conversation = conversationOf([message]),
) {
  const reply: AgentReply = await agent.run(message, contextOf(conversation));
  if (typeof reply === 'string' || !(Symbol.asyncIterator in reply)) throw new Error('expected a stream');
  const iterator = reply[Symbol.asyncIterator]() as AsyncIterator<string, AgentReplyWithMetadata>;
  const deltas: string[] = [];
  for (;;) {
    const next = await iterator.next();
    if (next.done) return { content: deltas.join(''), metadata: next.value.metadata };
    deltas.push(next.value);
  }
}

const text = (request: RecordedRequest | undefined, index: number) =>
  String(request?.body.messages.at(index)?.content ?? '');

describe('llmAgent limits', () => {
  it('sends maxTokens as max_completion_tokens, and nothing when it is not set', async () => {
    await script(['short', 'long']);
    await run(agentOf({ maxTokens: 64 }), 'hi');
    await run(agentOf({}), 'hi');
    expect(server.requests[0]?.body).toMatchObject({ max_completion_tokens: 64 });
    expect(server.requests[1]?.body).not.toHaveProperty('max_completion_tokens');
    expect(server.requests[1]?.body).not.toHaveProperty('max_tokens');
  });

  it('makes at most 10 model calls by default, then answers with the tool results so far, marked partial', async () => {
    await script(
      Array.from({ length: 10 }, (_, index) => ({
        toolCalls: [{ name: 'add', arguments: { a: index, b: 1 } }],
      })),
    );
    const result = await run(agentOf({ tools: [add] }), 'count');
    expect(server.requests).toHaveLength(10);
    expect(result.metadata).toMatchObject({ iterations: 10, partial: true });
    const lines = result.content.split('\n');
    expect(lines[0]).toBe('I stopped after 10 model calls without a final answer. The tool results so far:');
    expect(lines.slice(1)).toEqual(Array.from({ length: 9 }, (_, index) => `- add: ${index + 1}`));
    server.assertDone();
  });

  it('answers with the text it wrote when it runs out of model calls', async () => {
    const step = { content: 'Still checking.', toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }] };
    await script([step, step]);
    const result = await run(agentOf({ tools: [add], maxIterations: 2 }), 'check');
    expect(result.content).toBe('Still checking.\n\nStill checking.');
    expect(result.metadata).toMatchObject({ iterations: 2, partial: true });
  });

  it('rejects bad limits and memory options at construction', () => {
    const attempts: Partial<LlmAgentOptions>[] = [
      { maxTokens: 0 },
      { memory: 'everything' as never },
      { memory: { strategy: 'window', window: 0 } },
      { memory: { strategy: 'hybrid', tokenBudget: 300 } },
      { memory: { strategy: 'window', tokenBudget: 100 }, tools: [add] },
    ];
    const messages = attempts.map((options) => {
      try {
        llmAgent({ name: 'agent', ...base, apiKey: 'k', ...options });
        return 'no error';
      } catch (error) {
        expect(ConfigurationError.isInstance(error)).toBe(true);
        return (error as Error).message;
      }
    });
    expect(messages).toEqual([
      "llmAgent 'agent': maxTokens must be a positive integer, got 0",
      "llmAgent 'agent': memory must be 'window', 'summary', 'hybrid' or { strategy, … }",
      "llmAgent 'agent': memory.window must be a positive integer, got 0",
      expect.stringMatching(
        /^llmAgent 'agent': memory.tokenBudget 300 is too small; it needs at least \d+ with summaryMaxTokens 500$/,
      ),
      expect.stringMatching(/^llmAgent 'agent': memory.tokenBudget 100 is too small; it needs at least \d+$/),
    ]);
  });
});

describe('llmAgent memory edge cases', () => {
  it('cuts a task larger than the budget with a note, keeping the request within it', async () => {
    await script(['done']);
    const task = 'Please read this. '.repeat(400);
    await run(
      agentOf({ memory: { strategy: 'window', tokenBudget: 300 } }),
      task,
      conversationOf(['earlier', 'reply', task]),
    );
    const [request] = server.requests;
    expect(estimateRequestTokens({ messages: request?.body.messages ?? [] })).toBeLessThanOrEqual(300);
    expect(text(request, 0)).toBe('Be brief.');
    expect(text(request, -1).startsWith('Please read this.')).toBe(true);
    expect(text(request, -1).endsWith(TRUNCATION_NOTE)).toBe(true);
    // No room was left for history.
    expect(request?.body.messages).toHaveLength(2);
  });

  it('keeps every tool round within the budget by letting the oldest history go', async () => {
    await script([
      { toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }], content: 'x'.repeat(800) },
      'The sum is 3.',
    ]);
    const history = Array.from({ length: 9 }, (_, index) => `message ${index} ${'y'.repeat(200)}`);
    const agent = agentOf({ tools: [add], memory: { strategy: 'window', tokenBudget: 700 } });
    await run(agent, 'add 1 and 2', conversationOf([...history, 'add 1 and 2']));
    const [first, second] = server.requests;
    for (const request of [first, second]) {
      expect(
        estimateRequestTokens({ messages: request?.body.messages ?? [], tools: request?.body.tools }),
      ).toBeLessThanOrEqual(700);
    }
    // The second request carries the tool round, so it has less history; the newest history message stays.
    const historyOf = (request: RecordedRequest | undefined) =>
      (request?.body.messages ?? []).filter((message) => String(message.content).startsWith('message '));
    expect(historyOf(second).length).toBeLessThan(historyOf(first).length);
    expect(historyOf(second).at(-1)?.content).toBe(history.at(-1));
  });

  it('answers without the summary when a summary call fails, and folds the missed messages in next time', async () => {
    await script([{ error: { status: 500 } }, 'answer 3', 'User asked about 1, 2 and 3.', 'answer 4']);
    const agent = agentOf({ memory: 'summary' });
    const third = await run(agent, 'q3', conversationOf(['q1', 'a1', 'q2', 'a2', 'q3']));
    expect(third.content).toBe('answer 3');
    expect(server.requests[1]?.body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'q3' },
    ]);

    await run(agent, 'q4', conversationOf(['q1', 'a1', 'q2', 'a2', 'q3', 'answer 3', 'q4']));
    const update = text(server.requests[2], -1);
    expect(update).toBe(
      'Summary so far:\n(none yet)\n\nNew messages:\nUser: q1\n\nAssistant: a1\n\nUser: q2\n\nAssistant: a2\n\nUser: q3\n\nAssistant: answer 3',
    );
    expect(text(server.requests[3], 0)).toContain('User asked about 1, 2 and 3.');
    server.assertDone();
  });
});
