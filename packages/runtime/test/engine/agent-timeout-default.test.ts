import type { ToolMessage } from '@switchboard/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Agent, defineAgent } from '../../src/agents/agent.js';
import type { App } from '../../src/app.js';
import type { TurnResult } from '../../src/engine/turn-types.js';
import { createApp, echoAgent } from '../support/app-fixtures.js';

/** The default agent timeout docs/concepts/protocol.md states: "gets `ctx.signal` (timeout, default 60 s)". */
const DEFAULT_TIMEOUT_MS = 60_000;

/** Never answers and ignores its signal; `started` resolves once the runtime has called it. */
function neverSettlingAgent(name = 'stuck'): Agent & { started: Promise<void> } {
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  const agent = defineAgent({
    name,
    description: 'Never answers',
    run: () => {
      markStarted();
      return new Promise<string>(() => {});
    },
  });
  return Object.assign(agent, { started });
}

/** Lets real event-loop turns pass (setImmediate is not faked) until `done()` or a bound is reached. */
async function settleWithoutTime(done: () => boolean): Promise<void> {
  for (let turn = 0; turn < 200 && !done(); turn++) await new Promise((resolve) => setImmediate(resolve));
}

describe('default agent timeout', () => {
  let app: App | undefined;
  afterEach(async () => {
    const closing = app?.close();
    app = undefined;
    // A turn still running (when the test failed) is abandoned after close()'s 10 s grace, on the fake clock.
    if (vi.isFakeTimers()) await vi.advanceTimersByTimeAsync(10_000);
    await closing;
    vi.useRealTimers();
  });

  it('cuts off an agent that never settles after 60 s when no agentTimeoutMs is set', async () => {
    vi.useFakeTimers({
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'],
    });
    const stuck = neverSettlingAgent('stuck');
    const created = createApp({ agents: [echoAgent(), stuck] });
    app = created.app;

    let result: TurnResult | undefined;
    const pending = app.chat({ sessionId: 'hang', message: 'stuck: are you there?' }).then((done) => {
      result = done;
      return done;
    });
    await stuck.started;

    // One millisecond before the default timeout the turn is still waiting for the agent...
    await vi.advanceTimersByTimeAsync(DEFAULT_TIMEOUT_MS - 1);
    await settleWithoutTime(() => result !== undefined);
    expect(result, 'the agent was cut off before 60 s').toBeUndefined();
    expect(created.orchestrator.seen).toHaveLength(1);

    // ...and at 60 s it is cut off.
    await vi.advanceTimersByTimeAsync(1);
    await settleWithoutTime(() => result !== undefined);
    expect(result, 'the turn was still waiting for the agent at 60 s').toBeDefined();
    const done = await pending;

    // The orchestrator's second decision saw the agent's failure as an error tool message.
    expect(created.orchestrator.seen).toHaveLength(2);
    const toolMessage = created.orchestrator.seen[1]!.messages.at(-1) as ToolMessage;
    expect(toolMessage).toMatchObject({
      role: 'tool',
      name: 'stuck',
      status: 'error',
      content: "Agent 'stuck' timed out after 60000 ms (agent_timeout)",
      metadata: { errorCode: 'agent_timeout' },
    });

    // The user gets a clear answer saying which agent failed and why (the orchestrator's relay of it).
    expect(done).toMatchObject({
      status: 'completed',
      reply: "Sorry, the stuck agent failed: Agent 'stuck' timed out after 60000 ms (agent_timeout)",
    });
    expect(done.steps.map((step) => step.kind)).toEqual(['call', 'answer']);
    // The failed call and the answer are in the session's history, as for any other turn.
    expect((await app.sessions.read('hang')).map((message) => message.role)).toEqual([
      'user',
      'tool',
      'assistant',
    ]);
  });
});
