import {
  AbstractOrchestrator,
  type Conversation,
  currentUserMessage,
  latestToolResults,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { defineAgent } from '../src/agents/agent.js';
import { llmAgent } from '../src/agents/llm-agent.js';
import type { ConversationMemoryOptions } from '../src/agents/llm-memory.js';
import { estimateRequestTokens } from '../src/agents/llm-token-estimate.js';
import type { OrchestratorInput } from '../src/app.js';
import { memoryNamespace } from '../src/stores/memory-binding.js';
import { runConversation } from '../src/testing/conversation-runner.js';
import { createScriptedModelServer, type ScriptedModelServer } from '../src/testing/scripted-model-server.js';
import type { RecordedRequest, ScriptedReply } from '../src/testing/scripted-script.js';
import { useSpanRecording } from './support/span-recording.js';

const SUMMARY_PROMPT = 'You keep a running summary';
const FILLER = ' Lorem ipsum dolor sit amet, consectetur adipiscing elit.';

/** The user's message of turn `n`: a marker `Q<n>` and about 100 tokens of text. */
const question = (n: number) => `Q${n}:${FILLER.repeat(7)}`;

function text(content: unknown): string {
  return typeof content === 'string' ? content : JSON.stringify(content);
}

const isSummaryRequest = (request: RecordedRequest) =>
  text(request.body.messages[0]?.content).startsWith(SUMMARY_PROMPT);

/** The markers (`Q12`, `A12`) in a text. */
const markers = (value: string) => value.match(/\b[QA]\d+\b/g) ?? [];

/**
 * A model that writes summaries naming the newest marker it has seen, and
 * answers `A<n>` to question `Q<n>`.
 */
function scriptedModel(): (request: RecordedRequest) => ScriptedReply {
  let summaries = 0;
  return (request) => {
    const last = text(request.body.messages.at(-1)?.content);
    if (isSummaryRequest(request)) {
      summaries += 1;
      const newest = markers(last.slice(last.indexOf('New messages:'))).at(-1);
      return { content: `Summary ${summaries}: the conversation reached ${newest}.` };
    }
    const n = /Q(\d+)/.exec(last)?.[1];
    return { content: `A${n}: an answer.${FILLER}` };
  };
}

/** Calls `helper`, then `writer` with the user's message, then answers with the writer's reply. */
class HelperThenWriter extends AbstractOrchestrator {
  protected handleMessage(conversation: Conversation) {
    const [reply] = latestToolResults(conversation);
    const user = currentUserMessage(conversation).content;
    if (!reply) return toolCall('helper', user);
    if (reply.name === 'helper') return toolCall('writer', user);
    return routeToUser(reply.content);
  }
}

/** Sends every message to the writer and its answer to the user. */
class ToWriter extends AbstractOrchestrator {
  protected handleMessage(conversation: Conversation) {
    const [reply] = latestToolResults(conversation);
    if (reply) return routeToUser(reply.content);
    return toolCall('writer', currentUserMessage(conversation).content);
  }
}

const helper = defineAgent({ name: 'helper', description: 'Looks things up', run: () => 'looked it up' });

let server: ScriptedModelServer;
afterEach(async () => server?.close());

async function converse(
  memory: ConversationMemoryOptions,
  turns: number,
  orchestrator: OrchestratorInput = ToWriter,
) {
  server = await createScriptedModelServer();
  const model = scriptedModel();
  // One entry per request: two per turn at most (a summary update and the answer), plus the first catch-up.
  server.push(...Array.from({ length: turns * 2 + 10 }, () => model));
  const client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
  const writer = llmAgent({
    name: 'writer',
    description: 'Answers with the conversation in mind',
    model: 'm',
    instructions: 'Answer briefly.',
    stream: false,
    memory,
    client,
  });
  const run = await runConversation({
    orchestrator,
    agents: [writer, helper],
    messages: Array.from({ length: turns }, (_, index) => question(index + 1)),
    sessionId: 'memory-session',
  });
  await run.app.close();
  expect(server.problems).toEqual([]);
  expect(run.turns.every((turn) => turn.status === 'completed')).toBe(true);
  const summaries = server.requests.filter(isSummaryRequest);
  const answers = server.requests.filter((request) => !isSummaryRequest(request));
  return { run, summaries, answers };
}

describe('llmAgent memory in a conversation', () => {
  it('keeps a 200-message hybrid conversation within the budget, updating the summary turn by turn', async () => {
    const tokenBudget = 1_200;
    const { run, summaries, answers } = await converse({ strategy: 'hybrid', tokenBudget }, 67);
    expect(run.history.length).toBeGreaterThanOrEqual(200);
    expect(answers).toHaveLength(67);

    // Every request, summaries included, is within the budget, and the budget did bind.
    const sizes = server.requests.map((request) =>
      estimateRequestTokens({ messages: request.body.messages, tools: request.body.tools }),
    );
    expect(Math.max(...sizes)).toBeLessThanOrEqual(tokenBudget);
    expect(Math.max(...sizes)).toBeGreaterThan(tokenBudget * 0.8);

    // Updated, not rebuilt: each update starts from the previous summary and sends only messages no update sent before.
    expect(summaries.length).toBeGreaterThan(40);
    const seen = new Set<string>();
    summaries.forEach((request, index) => {
      const prompt = text(request.body.messages[1]?.content);
      const previous = index === 0 ? '(none yet)' : `Summary ${index}: `;
      expect(prompt.startsWith(`Summary so far:\n${previous}`)).toBe(true);
      const fresh = markers(prompt.slice(prompt.indexOf('New messages:')));
      expect(fresh.filter((marker) => seen.has(marker))).toEqual([]);
      for (const marker of fresh) seen.add(marker);
      // After the first catch-up, each turn's update folds in one question and one answer, never the history.
      if (index > 0) expect(fresh.length).toBeLessThanOrEqual(2);
    });

    // The model sees the newest summary in the instructions, then the recent messages, then the task.
    const last = answers.at(-1)?.body.messages ?? [];
    expect(text(last[0]?.content)).toContain(`Summary ${summaries.length}: the conversation reached`);
    expect(last.at(-1)).toEqual({ role: 'user', content: question(67) });
    const verbatim = last.slice(1, -1).map((message) => markers(text(message.content))[0]);
    expect(verbatim.length).toBeGreaterThan(4);
    expect(verbatim.length).toBeLessThanOrEqual(20);

    // Nothing is lost: every earlier question and answer is in the summary or sent word for word.
    const expected = Array.from({ length: 66 }, (_, index) => [`Q${index + 1}`, `A${index + 1}`]).flat();
    expect(new Set([...seen, ...verbatim])).toEqual(new Set(expected));

    // The summary lives in session memory, with how much it covers.
    const stored = await run.app.memory.get(
      memoryNamespace('session', { sessionId: 'memory-session' }),
      'llm-agent:writer:summary',
    );
    expect(stored).toMatchObject({ v: 1, count: seen.size, summary: expect.stringMatching(/^Summary \d+/) });
  });

  it("with 'hybrid' and no budget, sends a short conversation whole and switches to summary + window past 20 messages", async () => {
    const { summaries, answers } = await converse({ strategy: 'hybrid' }, 12);
    // Turn 11 sees 20 earlier messages: still whole. Turn 12 sees 22: the oldest two are summarised.
    expect(answers[10]?.body.messages).toHaveLength(22);
    expect(summaries).toHaveLength(1);
    const update = text(summaries[0]?.body.messages[1]?.content);
    expect(markers(update.slice(update.indexOf('New messages:')))).toEqual(['Q1', 'A1']);
    const last = answers[11]?.body.messages ?? [];
    expect(text(last[0]?.content)).toContain('Summary 1: the conversation reached A1.');
    expect(last.slice(1, -1).map((message) => markers(text(message.content))[0])).toEqual(
      Array.from({ length: 10 }, (_, index) => [`Q${index + 2}`, `A${index + 2}`]).flat(),
    );
  });

  it("with 'window', sends the last messages word for word, agent replies of this turn as notes, and no summary", async () => {
    const { summaries, answers } = await converse({ strategy: 'window', window: 4 }, 3, HelperThenWriter);
    expect(summaries).toEqual([]);
    const messages = answers.at(-1)?.body.messages.map((message) => [message.role, text(message.content)]);
    expect(messages).toEqual([
      ['system', 'Answer briefly.'],
      ['assistant', expect.stringMatching(/^A1: /)],
      ['user', question(2)],
      ['assistant', expect.stringMatching(/^A2: /)],
      ['user', '[Agent "helper" replied]\nlooked it up'],
      ['user', question(3)],
    ]);
  });

  it("with 'summary', sends a summary of the earlier turns and only the current turn word for word", async () => {
    const { summaries, answers } = await converse({ strategy: 'summary' }, 3, HelperThenWriter);
    expect(summaries).toHaveLength(2);
    const messages = answers.at(-1)?.body.messages.map((message) => [message.role, text(message.content)]);
    expect(messages).toEqual([
      ['system', expect.stringContaining('Summary 2: the conversation reached A2.')],
      ['user', '[Agent "helper" replied]\nlooked it up'],
      ['user', question(3)],
    ]);
    const update = text(summaries[1]?.body.messages[1]?.content);
    expect(markers(update.slice(update.indexOf('New messages:')))).toEqual(['Q2', 'A2']);
  });
});

describe('llmAgent memory tracing', () => {
  const recording = useSpanRecording();

  it('records each summary update as a generation under the agent span and counts its tokens in the usage', async () => {
    const { run } = await converse({ strategy: 'summary' }, 2);
    const spans = recording().spans;
    const summaries = spans.filter((span) => span.name === 'summary m');
    expect(summaries).toHaveLength(1);
    const summary = summaries[0];
    if (!summary) return;
    expect(summary.attributes).toMatchObject({
      'langfuse.observation.type': 'generation',
      'gen_ai.request.model': 'm',
      'langfuse.observation.output': expect.stringContaining('Summary 1: the conversation reached A1.'),
    });
    const agentSpan = recording().parentOf(summary);
    expect(agentSpan?.name).toBe('agent writer');

    // The second answer's usage adds the summary's tokens to the answer's own.
    const secondCall = spans.filter(
      (span) =>
        span.attributes['langfuse.observation.type'] === 'generation' &&
        recording().parentOf(span) === agentSpan,
    );
    const total = secondCall.reduce(
      (sum, span) => sum + Number(span.attributes['gen_ai.usage.input_tokens'] ?? 0),
      0,
    );
    const replies = run.history.filter((message) => message.role === 'tool' && message.name === 'writer');
    expect(replies[1]?.metadata?.usage).toMatchObject({ inputTokens: total });
    expect(secondCall).toHaveLength(2);
  });
});
