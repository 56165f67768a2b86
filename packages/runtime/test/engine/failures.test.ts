import {
  currentUserMessage,
  latestToolResults,
  type MessageItem,
  type Orchestrator,
  type ToolMessage,
  toolCall,
} from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import { App } from '../../src/app.js';
import type { TurnEvent } from '../../src/engine/events.js';
import type { TurnResult } from '../../src/engine/turn-engine.js';
import type { TurnRecord } from '../../src/stores/session-store.js';
import {
  buildApp,
  createApp,
  type DecisionHandler,
  echoAgent,
  failingAgent,
  hangingAgent,
  loopForever,
  postJson,
  relay,
  type ScriptedOrchestrator,
  STACK_LINE,
} from '../support/app-fixtures.js';

const SAFE_REPLY = /something went wrong/i;
const SECRET = 'postgres://admin:hunter2@10.0.0.7/prod';

/** Misbehaves for messages starting with `fail`, relays to the echo agent otherwise. */
function misbehaveOnFail(bad: DecisionHandler): DecisionHandler {
  const normal = relay();
  return (conversation) =>
    currentUserMessage(conversation).content.startsWith('fail') ? bad(conversation) : normal(conversation);
}

function lastToolMessageSeen(orchestrator: ScriptedOrchestrator): ToolMessage {
  const messages = orchestrator.seen.at(-1)!.messages;
  const last = messages.at(-1);
  expect(last?.role).toBe('tool');
  return last as ToolMessage;
}

/** The reply the orchestrator was handed for its last decision (a failure's copy carries the error's own text). */
function lastResultSeen(orchestrator: ScriptedOrchestrator): ToolMessage {
  const [result] = latestToolResults(orchestrator.seen.at(-1)!);
  expect(result).toBeDefined();
  return result as ToolMessage;
}

describe('failures inside a turn', () => {
  let app: App | undefined;
  afterEach(() => app?.close());

  const chat = async (message: string, sessionId?: string) => {
    const response = await app!.request('/v1/chat', postJson({ message, sessionId }));
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).not.toMatch(STACK_LINE);
    return JSON.parse(text) as TurnResult;
  };
  const history = async (sessionId: string) =>
    (await (await app!.request(`/v1/sessions/${sessionId}`)).json()) as {
      messages: MessageItem[];
      turns: TurnRecord[];
    };

  it('an agent that throws becomes an error tool message the orchestrator sees, and the user gets a clear reply', async () => {
    const created = createApp({
      agents: [echoAgent(), failingAgent('weather', 'the weather service exploded')],
    });
    app = created.app;
    const result = await chat('weather: forecast for Oslo', 'throwing-agent');

    expect(result.status).toBe('completed');
    expect(result.reply).toBe("Sorry, the weather agent failed: Agent 'weather' failed (agent_error)");
    expect(lastToolMessageSeen(created.orchestrator)).toMatchObject({
      name: 'weather',
      status: 'error',
      content: "Agent 'weather' failed (agent_error)",
    });
    expect(lastResultSeen(created.orchestrator).metadata?.errorDetail).toBe(
      "Agent 'weather' failed: the weather service exploded",
    );
    const stored = (await history('throwing-agent')).messages.find((message) => message.role === 'tool');
    expect(stored).toMatchObject({ status: 'error', metadata: { errorCode: 'agent_error' } });

    expect((await chat('echo: still there?')).reply).toBe('echo: still there?');
  });

  it.each([
    ['the app option agentTimeoutMs', { agentTimeoutMs: 80 }, undefined],
    ["the agent's own timeoutMs", { agentTimeoutMs: 60_000 }, 80],
  ])(
    'an agent that hangs past %s becomes a timeout error, the reply is prompt, the server keeps serving',
    async (_how, options, agentTimeout) => {
      const built = buildApp({ agents: [echoAgent(), hangingAgent('stuck', agentTimeout)], ...options });
      app = built.app;
      const server = await built.app.start(built.orchestrator, { port: 0 });
      const send = (message: string) => fetch(`${server.url}/v1/chat`, postJson({ message }));

      const response = await send('stuck: are you there?');
      expect(response.status).toBe(200);
      const result = (await response.json()) as TurnResult;
      // Prompt: the 80 ms timeout ended the hang (in the second case the app's 60 s one would have, past the
      // test's own timeout, and said so).
      expect(result.reply).toMatch(/Sorry, the stuck agent failed: .*timed out after 80 ms/);
      expect(lastToolMessageSeen(built.orchestrator)).toMatchObject({
        status: 'error',
        metadata: { errorCode: 'agent_timeout' },
      });

      const next = await send('echo: next');
      expect(((await next.json()) as TurnResult).reply).toBe('echo: next');
      await server.close();
    },
  );

  it("aborts the agent's signal when it times out, so it can stop working", async () => {
    let seenSignal: AbortSignal | undefined;
    const patient = defineAgent({
      name: 'patient',
      description: 'Waits for its signal',
      timeoutMs: 40,
      run: (_message, { signal }) => {
        seenSignal = signal;
        return new Promise<string>((_resolve, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason)),
        );
      },
    });
    const created = createApp({ agents: [patient], handler: relay({ defaultAgent: 'patient' }) });
    app = created.app;
    await chat('anything');
    expect(seenSignal?.aborted).toBe(true);
    expect(lastToolMessageSeen(created.orchestrator).content).toMatch(/timed out after 40 ms/);
  });

  it('an orchestrator that routes forever fails with max_hops_exceeded after maxHops steps and a safe reply', async () => {
    app = createApp({ agents: [echoAgent()], handler: misbehaveOnFail(loopForever()), maxHops: 4 }).app;
    const result = await chat('fail: loop', 'looping');

    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('max_hops_exceeded');
    expect(result.reply).toMatch(SAFE_REPLY);
    expect(result.steps).toHaveLength(4);
    expect(result.steps.every((step) => step.kind === 'call')).toBe(true);

    const stored = await history('looping');
    expect(stored.messages.map((message) => message.role)).toEqual([
      'user',
      'tool',
      'tool',
      'tool',
      'tool',
      'assistant',
    ]);
    expect(stored.messages.at(-1)?.content).toBe(result.reply);
    expect(stored.turns[0]).toMatchObject({ status: 'failed', error: { code: 'max_hops_exceeded' } });
    expect((await chat('ok then')).reply).toBe('echo: ok then');
  });

  it('defaults maxHops to 10 and uses failureMessage for the reply', async () => {
    const failureMessage = 'We could not finish that, please rephrase.';
    app = createApp({ agents: [echoAgent()], handler: loopForever(), failureMessage }).app;
    const result = await chat('loop');
    expect(result.steps).toHaveLength(10);
    expect(result.reply).toBe(failureMessage);
  });

  it.each([
    [
      'throws',
      (() => {
        throw new Error(`cannot reach ${SECRET}`);
      }) as DecisionHandler,
      'orchestrator_error',
    ],
    [
      'rejects',
      (async () => Promise.reject(new TypeError(`bad row from ${SECRET}`))) as DecisionHandler,
      'orchestrator_error',
    ],
    ['returns an unknown agent', (() => toolCall('ghost', 'boo')) as DecisionHandler, 'unknown_agent'],
    ['returns an empty fan-out', (() => []) as DecisionHandler, 'invalid_decision'],
    ['returns garbage', (() => ({ to: 'echo' }) as never) as DecisionHandler, 'invalid_decision'],
  ])(
    'an orchestrator that %s ends the turn as failed with a safe reply, and the server keeps serving',
    async (_what, bad, code) => {
      app = createApp({ agents: [echoAgent()], handler: misbehaveOnFail(bad) }).app;
      const result = await chat('fail please', 'broken-orchestrator');

      expect(result).toMatchObject({ status: 'failed', error: { code } });
      expect(result.reply).toMatch(SAFE_REPLY);
      expect(result.reply).not.toContain('hunter2');
      expect(result.error?.message).not.toContain('hunter2');
      const stored = await history('broken-orchestrator');
      expect(stored.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
      expect(stored.turns[0]).toMatchObject({ status: 'failed', error: { code } });

      expect((await chat('ok, something normal')).reply).toBe('echo: ok, something normal');
      expect((await app.request('/healthz')).status).toBe(200);
    },
  );

  it('records only the error code by default, so internals never reach clients', async () => {
    app = createApp({ agents: [echoAgent()], handler: () => toolCall('ghost', 'boo') }).app;
    const result = await chat('hello', 'ghostly');
    expect(result.steps).toMatchObject([{ kind: 'error', error: 'unknown_agent' }]);
    const [turn] = (await history('ghostly')).turns;
    expect(turn?.error).toEqual({ code: 'unknown_agent', message: result.reply });
    expect(result.error).toEqual({ code: 'unknown_agent', message: result.reply });
    expect(JSON.stringify(await history('ghostly'))).not.toContain("ghost'");
  });

  it('names the unknown agent in steps and turns with exposeErrorDetails', async () => {
    app = createApp({
      agents: [echoAgent()],
      handler: () => toolCall('ghost', 'boo'),
      exposeErrorDetails: true,
    }).app;
    const result = await chat('hello', 'ghostly');
    expect(result.steps).toMatchObject([{ kind: 'error', error: expect.stringContaining("'ghost'") }]);
    const [turn] = (await history('ghostly')).turns;
    expect(turn?.error?.message).toMatch(/Unknown agent 'ghost'; known agents: echo/);
    expect(result.error).toEqual(turn?.error);
  });

  it('an ErrorMessage with a userMessage shows that message to the user', async () => {
    app = createApp({
      agents: [echoAgent()],
      handler: () => ({ error: new Error('quota exhausted'), userMessage: 'Please try again in a minute.' }),
    }).app;
    const result = await chat('hello');
    expect(result).toMatchObject({ status: 'failed', reply: 'Please try again in a minute.' });
  });

  it('a hand-written Orchestrator (no base class) that returns an unknown agent fails the turn with unknown_agent, not a 500', async () => {
    const raw: Orchestrator = {
      name: 'raw',
      agents: [{ name: 'echo', description: 'Repeats the message' }],
      decide: async () => toolCall('ghost', 'boo'),
    };
    app = new App({ name: 'raw-app', agents: [echoAgent()], logger: () => {} }).mount(raw);
    const response = await app.request('/v1/chat', postJson({ message: 'hello' }));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: 'failed', error: { code: 'unknown_agent' } });
  });

  it('a streaming agent that fails mid-stream ends its message with an error the orchestrator sees', async () => {
    const flaky = defineAgent({
      name: 'flaky',
      description: 'Fails after the first chunk',
      async *run() {
        yield 'Hel';
        throw new Error('upstream closed the stream');
      },
    });
    const created = createApp({ agents: [flaky], handler: relay({ defaultAgent: 'flaky' }) });
    app = created.app;
    const events: TurnEvent[] = [];
    const result = await app.chat({ message: 'go', onEvent: (event) => events.push(event) });

    const agentEvents = events.filter((event) => event.type.startsWith('agent-'));
    expect(agentEvents.map((event) => event.type)).toEqual(['agent-start', 'agent-delta', 'agent-end']);
    expect(agentEvents.at(-1)).toMatchObject({ status: 'error', endOfMessage: true });
    expect(lastResultSeen(created.orchestrator)).toMatchObject({
      status: 'error',
      metadata: { errorDetail: expect.stringContaining('upstream closed the stream') },
    });
    expect(result.reply).toContain('Sorry, the flaky agent failed');
  });
});
