import { ServerShutdownError } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import {
  buildApp,
  createApp,
  echoAgent,
  postJson,
  type RunTiming,
  sleep,
  slowAgent,
} from '../support/app-fixtures.js';
import { lapse, settlesBefore } from '../support/settles-before.js';

/**
 * How long an idle keep-alive connection lasts when the server does not close it: Node's server advertises
 * 5 s, and fetch ends its side 2 s before that.
 */
const IDLE_CONNECTION_MS = 3_000;

async function waitForRun(runs: readonly RunTiming[]): Promise<void> {
  for (let waited = 0; runs.length === 0; waited += 2) {
    if (waited > 2000) throw new Error('the agent never started');
    await sleep(2);
  }
}

/** Resolves to the status of a request, or to `'refused'` when the connection itself fails. */
async function statusOrRefused(request: Promise<Response>): Promise<number | 'refused'> {
  try {
    return (await request).status;
  } catch {
    return 'refused';
  }
}

describe('graceful close', () => {
  it('over a real port: the in-flight turn completes with 200, new requests are refused, close resolves', async () => {
    const slow = slowAgent('slow', 250);
    const { app, orchestrator } = buildApp({ agents: [slow, echoAgent()] });
    const server = await app.start(orchestrator, { port: 0 });
    const inFlight = fetch(
      `${server.url}/v1/chat`,
      postJson({ message: 'slow: finish me', sessionId: 'closing' }),
    );
    await waitForRun(slow.runs);

    let closed = false;
    const closing = server.close().then(() => {
      closed = true;
    });
    await sleep(20);
    expect(closed).toBe(false);
    const refused = await statusOrRefused(
      fetch(`${server.url}/v1/chat`, postJson({ message: 'echo: too late' })),
    );
    expect(refused === 'refused' || refused === 503).toBe(true);

    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(((await response.json()) as { reply: string }).reply).toBe('slow done: finish me');
    // Nothing is left to do: close must not sit out the client's keep-alive connection, now idle.
    await settlesBefore(closing, lapse(IDLE_CONNECTION_MS / 2), 'half the life of an idle connection');
    expect(closed).toBe(true);
    expect(await statusOrRefused(fetch(`${server.url}/healthz`))).toBe('refused');
    // The finished turn was stored before the stores closed.
    expect((await app.sessions.read('closing')).map((message) => message.role)).toEqual([
      'user',
      'tool',
      'assistant',
    ]);
  });

  it('in-process: new chats get 503 shutting_down and /readyz fails while the running turn finishes', async () => {
    const slow = slowAgent('slow', 200);
    const { app } = createApp({ agents: [slow, echoAgent()] });
    const inFlight = app.request('/v1/chat', postJson({ message: 'slow: finish me' }));
    await waitForRun(slow.runs);

    const closing = app.close();
    const late = await app.request('/v1/chat', postJson({ message: 'echo: too late' }));
    expect(late.status).toBe(503);
    expect(((await late.json()) as { error: { code: string; message: string } }).error).toEqual({
      code: 'shutting_down',
      message: 'The server is shutting down',
    });
    expect((await app.request('/readyz')).status).toBe(503);

    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(((await response.json()) as { reply: string }).reply).toBe('slow done: finish me');
    await closing;
    // Idempotent.
    await app.close();
  });

  it('abandons a turn that outlives closeGraceMs: its agent is stopped with the reason, and close resolves', async () => {
    let signal: AbortSignal | undefined;
    const stuck = defineAgent({
      name: 'stuck',
      description: 'Never answers',
      timeoutMs: 60_000,
      run: (_message, context) => {
        signal = context.signal;
        return new Promise<string>(() => {});
      },
    });
    const { app } = createApp({ agents: [stuck], closeGraceMs: 100 });
    const inFlight = app.chat({ message: 'stuck: forever' });
    await sleep(20);

    // Without the abandonment close would wait out the agent's 60 s deadline (and this test its timeout).
    await app.close();
    // The agent could tell why it was stopped.
    expect(signal?.aborted).toBe(true);
    expect(ServerShutdownError.isInstance(signal?.reason)).toBe(true);
    // The abandoned turn still ended with an answer rather than hanging forever, and the orchestrator was told why.
    const result = await inFlight;
    expect(result.reply).toBe(
      "Sorry, the stuck agent failed: Agent 'stuck' was stopped: the server shut down (agent_stopped)",
    );
  });
});
