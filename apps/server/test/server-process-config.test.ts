/**
 * The real server entry point (`src/main.ts`) in a child process, configured
 * the way a user configures it: environment variables selecting Redis, the
 * orchestrator, an OpenAI-compatible endpoint and Langfuse tracing. Each test
 * checks what the user notices: the start-up line, chat replies, shared
 * history, exported traces.
 */
import type { MessageItem } from '@switchboard/core';
import type { TurnResult } from '@switchboard/runtime';
import {
  createOtlpReceiver,
  createScriptedModelServer,
  type RecordedRequest,
} from '@switchboard/runtime/testing';
import { describe, expect, it } from 'vitest';
import { REDIS_URL, useRedis } from '../../../packages/runtime/test/support/redis.js';
import { readConfig, redactUrl } from '../src/config.js';
import { chat, startServer, stop } from './support/server-process.js';

/** The offline demo agents, in declared (rotation) order. */
const DEMO_AGENTS = ['clock', 'converter', 'calculator', 'help'];

async function readSession(url: string, sessionId: string) {
  const response = await fetch(`${url}/v1/sessions/${encodeURIComponent(sessionId)}`, {
    signal: AbortSignal.timeout(5_000),
  });
  return {
    status: response.status,
    body: (await response.json()) as { sessionId: string; messages: MessageItem[]; turns: TurnResult[] },
  };
}

/** The agents a turn called (its `call` steps; `route_to_user` is the answer, not an agent). */
const calledAgents = (result: TurnResult) =>
  result.steps.filter((step) => step.kind === 'call').flatMap((step) => step.calls.map((call) => call.agent));

/** The agent replies (`tool` messages) of a session. */
const toolMessages = (messages: MessageItem[]) =>
  messages.flatMap((message) => (message.role === 'tool' ? [message] : []));

describe('REDIS_URL: sessions live in Redis under REDIS_KEY_PREFIX', () => {
  // With Redis down its beforeAll fails this suite and the run (exit 1), under CI=true too: nothing passes by
  // being skipped. Afterwards it deletes the keys of every prefix it handed out.
  const redis = useRedis();

  it('names the Redis store, answers, shares the history with a second process, and leaves no keys', async () => {
    const prefix = redis.prefix();
    const env = { REDIS_URL, REDIS_KEY_PREFIX: prefix, ORCHESTRATOR: 'keyword' };
    const first = startServer(env);
    // As during a rolling upgrade: this one writes the records the previous version reads.
    const second = startServer({ ...env, REDIS_COMPACT_RECORDS: 'off' });
    const [firstUrl, secondUrl] = await Promise.all([first.listening, second.listening]);

    for (const server of [first, second]) {
      expect(server.output().stdout).toContain(`store redis ${redactUrl(REDIS_URL)}`);
      expect(server.output().stdout).toContain(`(prefix ${prefix})`);
    }

    const { status, body } = await chat(firstUrl, 'what is 2 + 3 * 4?');
    expect(status).toBe(200);
    expect(body.status).toBe('completed');
    expect(body.reply).toBe('2 + 3 * 4 = 14');
    expect(calledAgents(body)).toEqual(['calculator']);
    // The session really is in Redis, under the configured prefix and nowhere else.
    const sessionKeys = (await redis.keys('')).filter((key) => key.includes(`{${body.sessionId}}`));
    expect(sessionKeys).toContain(`${prefix}session:{${body.sessionId}}:messages`);
    expect(sessionKeys.filter((key) => !key.startsWith(prefix))).toEqual([]);

    // The first process goes away; the second still serves the conversation from Redis.
    expect(await stop(first)).toBe(0);
    const session = await readSession(secondUrl, body.sessionId);
    expect(session.status).toBe(200);
    expect(session.body.messages.map((message) => [message.role, message.content])).toEqual([
      ['user', 'what is 2 + 3 * 4?'],
      ['tool', '2 + 3 * 4 = 14'],
      ['assistant', '2 + 3 * 4 = 14'],
    ]);
    expect(session.body.turns.map((turn) => [turn.turnId, turn.status])).toEqual([
      [body.turnId, 'completed'],
    ]);

    // The second process continues the same conversation.
    const followUp = await chat(secondUrl, 'what is 10 / 4?', body.sessionId);
    expect(followUp.status).toBe(200);
    expect(followUp.body.reply).toContain('2.5');
    expect((await readSession(secondUrl, body.sessionId)).body.turns).toHaveLength(2);
    expect(await stop(second)).toBe(0);
    // The first process wrote compact records, the second (REDIS_COMPACT_RECORDS=off) the previous version's.
    const records = await redis.admin.lrange(`${prefix}session:{${body.sessionId}}:messages`, 0, -1);
    expect(records.map((record) => record.slice(0, 2))).toEqual(['[3', '[3', '[3', '{"', '{"', '{"']);
    expect(() => readConfig({ REDIS_COMPACT_RECORDS: 'maybe' })).toThrow(
      /REDIS_COMPACT_RECORDS must be on or off/,
    );

    // Both processes are gone: remove every key under the prefix and check none is left.
    const keys = await redis.keys(prefix);
    if (keys.length > 0) await redis.admin.del(...keys);
    expect(await redis.keys(prefix)).toEqual([]);
  }, 10_000);
});

describe('ORCHESTRATOR selects the router', () => {
  it('task: sends arithmetic to the calculator and conversions to the converter', async () => {
    const server = startServer({ ORCHESTRATOR: 'task' });
    const url = await server.listening;
    expect(server.output().stdout).toContain('orchestrator task');

    const arithmetic = await chat(url, 'what is 2 + 3 * 4?');
    expect(arithmetic.status).toBe(200);
    expect(arithmetic.body.status).toBe('completed');
    expect(arithmetic.body.reply).toBe('2 + 3 * 4 = 14');
    expect(calledAgents(arithmetic.body)).toEqual(['calculator']);

    const conversion = await chat(url, 'convert 5 km to miles');
    expect(conversion.status).toBe(200);
    expect(conversion.body.reply).toMatch(/3\.1\d* miles/);
    expect(calledAgents(conversion.body)).toEqual(['converter']);
  }, 10_000);

  it('round-robin: hands successive messages to each demo agent in turn, and the user gets its reply', async () => {
    const server = startServer({ ORCHESTRATOR: 'round-robin' });
    const url = await server.listening;
    expect(server.output().stdout).toContain('orchestrator round-robin');

    const agents: string[] = [];
    for (let index = 0; index < DEMO_AGENTS.length + 1; index += 1) {
      const { status, body } = await chat(url, 'what is 2 + 3 * 4?');
      expect(status).toBe(200);
      expect(body.status).toBe('completed');
      expect(body.reply.trim()).not.toBe('');
      const called = calledAgents(body);
      expect(called).toHaveLength(1);
      expect(DEMO_AGENTS).toContain(called[0]);
      agents.push(called[0]!);
      // The reply the user got is the reply of the agent the steps name.
      const session = await readSession(url, body.sessionId);
      expect(toolMessages(session.body.messages).map((message) => [message.name, message.content])).toEqual([
        [called[0], body.reply],
      ]);
    }
    // Four messages reach the four agents, the fifth starts the rotation again.
    expect([...agents.slice(0, DEMO_AGENTS.length)].sort()).toEqual([...DEMO_AGENTS].sort());
    expect(agents[DEMO_AGENTS.length]).toBe(agents[0]);
  }, 10_000);
});

describe('ORCHESTRATOR=llm with OPENAI_BASE_URL', () => {
  it('routes to the LLM assistant agent and the user reads what the assistant wrote', async () => {
    const userMessage = 'explain why the sea has tides';
    const task = 'Explain briefly why the sea has tides.';
    const assistantText = "Tides come mostly from the Moon's gravity pulling the oceans into two bulges.";
    const decide = (agent: string, message: string) =>
      JSON.stringify({ thought: `${agent} fits`, agent, message, reason: `${agent} fits` });
    // The router's second decision passes on whatever the assistant replied, as a real model would.
    const answerFromAgentReply = (request: RecordedRequest) => {
      const last = request.body.messages.at(-1);
      const text = typeof last?.content === 'string' ? last.content : '';
      const reply = /^\[Agent "assistant" replied\]\n([\s\S]*)$/.exec(text)?.[1];
      return decide('route_to_user', `From the assistant: ${reply ?? '(no assistant reply seen)'}`);
    };
    const model = await createScriptedModelServer({
      script: [
        decide('assistant', task), // router: call the assistant
        { content: assistantText }, // the assistant agent's answer (streamed)
        answerFromAgentReply, // router: answer the user
      ],
    });
    try {
      const server = startServer({
        ORCHESTRATOR: 'llm',
        OPENAI_API_KEY: 'test',
        OPENAI_BASE_URL: model.url,
        OPENAI_MODEL: 'scripted-model',
      });
      const url = await server.listening;
      expect(server.output().stdout).toContain('orchestrator llm');
      expect(server.output().stdout).toMatch(/agents [^\n]*\bassistant\b/);

      const { status, body } = await chat(url, userMessage);
      expect(model.problems).toEqual([]);
      expect(status).toBe(200);
      expect(body.status).toBe('completed');
      expect(body.reply).toBe(`From the assistant: ${assistantText}`);
      expect(calledAgents(body)).toEqual(['assistant']);
      expect(body.steps.at(-1)?.calls.map((call) => call.agent)).toEqual(['route_to_user']);

      // Router, assistant, router — each with the configured model.
      expect(model.requests.map((request) => request.body.model)).toEqual([
        'scripted-model',
        'scripted-model',
        'scripted-model',
      ]);
      const [routing, assistant] = model.requests;
      expect(JSON.stringify(routing?.body.response_format)).toContain('"assistant"');
      expect(routing?.body.messages.at(-1)).toEqual({ role: 'user', content: userMessage });
      expect(assistant?.body.stream).toBe(true);
      expect(assistant?.body.messages.at(-1)).toEqual({ role: 'user', content: task });

      const session = await readSession(url, body.sessionId);
      expect(toolMessages(session.body.messages).map((message) => [message.name, message.content])).toEqual([
        ['assistant', assistantText],
      ]);
      model.assertDone();
    } finally {
      await model.close();
    }
  }, 10_000);
});

describe('LANGFUSE_* tracing', () => {
  it("flushes the turn's spans to Langfuse on SIGTERM, long before the flush interval", async () => {
    const receiver = await createOtlpReceiver();
    try {
      const server = startServer({
        ORCHESTRATOR: 'keyword',
        LANGFUSE_PUBLIC_KEY: 'pk-lf-test',
        LANGFUSE_SECRET_KEY: 'sk-lf-test',
        LANGFUSE_BASE_URL: receiver.url,
        // Seconds: no periodic export can happen during the test, only the flush on shutdown.
        LANGFUSE_FLUSH_INTERVAL: '60',
      });
      const url = await server.listening;
      expect(server.output().stdout).toContain('Tracing to langfuse');

      const { status, body } = await chat(url, 'what is 2 + 3 * 4?');
      expect(status).toBe(200);
      expect(body.reply).toBe('2 + 3 * 4 = 14');
      expect(body.traceId).toMatch(/^[0-9a-f]{32}$/);
      // Nothing was exported yet: the spans wait for the flush interval.
      expect(receiver.requestCount).toBe(0);

      expect(await stop(server)).toBe(0);
      // The process exported before exiting: every span has arrived.
      expect(receiver.requests.map((request) => [request.method, request.path])).toContainEqual([
        'POST',
        '/api/public/otel/v1/traces',
      ]);
      for (const request of receiver.requests) {
        expect(request.path).toBe('/api/public/otel/v1/traces');
        expect(request.error).toBeUndefined();
        expect(request.headers.authorization).toBe(
          `Basic ${Buffer.from('pk-lf-test:sk-lf-test').toString('base64')}`,
        );
      }
      const spans = receiver.spans().filter((span) => span.traceId === body.traceId);
      const names = spans.map((span) => span.name);
      expect(names).toContain('keyword'); // the turn (root span, named after the orchestrator)
      expect(names).toContain('agent calculator');
      expect(spans.find((span) => span.name === 'keyword')?.parentSpanId).toBeUndefined();
    } finally {
      await receiver.close();
    }
  }, 10_000);
});
