import { type MessageItem, type ToolMessage, ValidationError } from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import type { App } from '../../src/app.js';
import {
  createApp,
  hangingAgent,
  parseEventStream,
  postJson,
  type ScriptedOrchestrator,
} from '../support/app-fixtures.js';

const SECRET = 'postgres://admin:hunter2@10.0.0.7/prod';

/** Throws an error whose text holds a connection string, as a careless agent would. */
const leakyAgent = defineAgent({
  name: 'weather',
  description: 'Fails with a secret in its error',
  run: () => {
    throw new Error(`could not connect to ${SECRET}`);
  },
});

/** The replies the orchestrator was handed for its second decision. */
function resultsSeen(orchestrator: ScriptedOrchestrator): readonly ToolMessage[] {
  return orchestrator.seen[1]?.lastResults ?? [];
}

describe("an agent's error text", () => {
  let app: App | undefined;
  afterEach(() => app?.close());

  it('never reaches the chat response, the stored session or the stream with details off; the orchestrator sees it', async () => {
    const created = createApp({ agents: [leakyAgent] });
    app = created.app;

    const response = await app.request('/v1/chat', postJson({ message: 'weather: Oslo', sessionId: 'leak' }));
    const body = await response.text();
    expect(response.status).toBe(200);
    expect(body).not.toContain('hunter2');
    expect(JSON.parse(body).reply).toBe(
      "Sorry, the weather agent failed: Agent 'weather' failed (agent_error)",
    );

    const session = await (await app.request('/v1/sessions/leak')).text();
    expect(session).not.toContain('hunter2');
    const stored = (JSON.parse(session) as { messages: MessageItem[] }).messages.find(
      (message) => message.role === 'tool',
    );
    expect(stored).toMatchObject({
      status: 'error',
      content: "Agent 'weather' failed (agent_error)",
      metadata: { errorCode: 'agent_error' },
    });
    expect(stored?.metadata).not.toHaveProperty('errorDetail');

    const streamed = await (
      await app.request('/v1/chat', postJson({ message: 'weather: Paris', sessionId: 'leak', stream: true }))
    ).text();
    expect(streamed).not.toContain('hunter2');
    const agentEnd = parseEventStream(streamed).find((event) => event.event === 'agent-end');
    expect(agentEnd?.data).toMatchObject({
      status: 'error',
      content: "Agent 'weather' failed (agent_error)",
    });
    expect(await (await app.request('/v1/sessions/leak')).text()).not.toContain('hunter2');

    // The orchestrator still learns what went wrong, in process.
    const [seen] = resultsSeen(created.orchestrator);
    expect(seen).toMatchObject({
      status: 'error',
      content: "Agent 'weather' failed (agent_error)",
      metadata: {
        errorCode: 'agent_error',
        errorDetail: `Agent 'weather' failed: could not connect to ${SECRET}`,
      },
    });
  });

  it('describes a timeout by its duration', async () => {
    const created = createApp({ agents: [hangingAgent('stuck', 50)] });
    app = created.app;
    const result = await app.chat({ message: 'stuck: hello' });
    expect(result.reply).toBe(
      "Sorry, the stuck agent failed: Agent 'stuck' timed out after 50 ms (agent_timeout)",
    );
  });

  it('keeps the message of a UserError the agent threw: it is meant for the user', async () => {
    const picky = defineAgent({
      name: 'weather',
      description: 'Knows some cities',
      run: () => {
        throw new ValidationError({ message: 'Unknown city Atlantis' });
      },
    });
    app = createApp({ agents: [picky] }).app;
    const result = await app.chat({ message: 'weather: Atlantis' });
    expect(result.reply).toBe(
      "Sorry, the weather agent failed: Agent 'weather' failed (agent_error): Unknown city Atlantis",
    );
  });

  it('is shown in full with exposeErrorDetails', async () => {
    app = createApp({ agents: [leakyAgent], exposeErrorDetails: true }).app;
    const response = await app.request('/v1/chat', postJson({ message: 'weather: Oslo', sessionId: 'open' }));
    expect(((await response.json()) as { reply: string }).reply).toBe(
      `Sorry, the weather agent failed: Agent 'weather' failed: could not connect to ${SECRET}`,
    );
    expect(await (await app.request('/v1/sessions/open')).text()).toContain('hunter2');
  });
});
