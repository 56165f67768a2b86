import { type BaseMessage, HumanMessage, SystemMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { App, type ServerHandle } from '../../src/app.js';
import { apiKeys } from '../../src/server/auth.js';
import { echoAgent, relay, ScriptedOrchestrator, streamingAgent } from '../support/app-fixtures.js';

const MODEL = 'desk-router';
const ACME = 'key-acme-0123456789';

/**
 * LangChain's `ChatOpenAI` (`@langchain/openai` 1.5, the newest on Node 20) as a user
 * configures it against the server: the Responses API (`useResponsesApi: true`) and plain
 * chat completions, each with history resent the way LangChain resends it.
 */
describe("LangChain's ChatOpenAI against the server, over a real port", () => {
  let server: ServerHandle;
  let orchestrator: ScriptedOrchestrator;
  /** The request bodies LangChain sent, to show which dialect each test spoke. */
  const sent: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    const agents = [echoAgent(), streamingAgent('streamer', ['Hel', 'lo ', 'world'])];
    const app = new App({
      name: 'desk',
      agents,
      logger: () => {},
      auth: apiKeys({ keys: { [ACME]: { tenantId: 'acme' } } }),
    });
    orchestrator = new ScriptedOrchestrator(agents, relay(), MODEL);
    server = await app.start(orchestrator, { port: 0 });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    orchestrator.seen.length = 0;
    sent.length = 0;
  });

  const chat = (useResponsesApi: boolean) =>
    new ChatOpenAI({
      model: MODEL,
      apiKey: ACME,
      useResponsesApi,
      maxRetries: 0,
      configuration: {
        baseURL: `${server.url}/v1`,
        fetch: (input: string | URL | Request, init?: RequestInit) => {
          sent.push({
            path: new URL(input instanceof Request ? input.url : input).pathname,
            ...JSON.parse(String(init?.body ?? '{}')),
          });
          return fetch(input, init);
        },
      },
    });

  /** The user and assistant texts the orchestrator saw on its last decision. */
  const lastSeen = () =>
    orchestrator.seen
      .at(-1)!
      .messages.filter((message) => message.role === 'user' || message.role === 'assistant')
      .map((message) => `${message.role}: ${message.content}`);

  /** Three turns, each resending the whole conversation with LangChain's own answer messages. */
  const converse = async (model: ChatOpenAI, texts: string[]) => {
    const history: BaseMessage[] = [new SystemMessage('You are terse.')];
    for (const text of texts) {
      history.push(new HumanMessage(text));
      history.push(await model.invoke(history));
    }
    return history;
  };

  describe('with useResponsesApi: true', () => {
    it('gets answers from invoke and stream, over /v1/responses', async () => {
      const model = chat(true);
      expect((await model.invoke('hello')).text).toBe('echo: hello');
      let streamed = '';
      for await (const chunk of await model.stream('streamer: go')) streamed += chunk.text;
      expect(streamed).toBe('Hello world');
      expect(sent.map((body) => [body.path, body.stream])).toEqual([
        ['/v1/responses', false],
        ['/v1/responses', true],
      ]);
    });

    it('chains a turn with previous_response_id from the answer’s metadata', async () => {
      const model = chat(true);
      const first = await model.invoke('one');
      const second = await model.invoke('two', {
        previous_response_id: String(first.response_metadata.id),
      });
      expect(second.text).toBe('echo: two');
      expect(lastSeen()).toEqual(['user: one', 'assistant: echo: one', 'user: two']);
    });

    it('resending the history (its answers as output messages with ids), the orchestrator sees every earlier turn', async () => {
      const history = await converse(chat(true), ['alpha', 'beta', 'gamma']);
      expect(history.at(-1)?.text).toBe('echo: gamma');
      expect(lastSeen()).toEqual([
        'user: alpha',
        'assistant: echo: alpha',
        'user: beta',
        'assistant: echo: beta',
        'user: gamma',
      ]);
    });
  });

  describe('with chat completions (the default)', () => {
    it('gets answers from invoke and stream, over /v1/chat/completions', async () => {
      const model = chat(false);
      expect((await model.invoke('hello')).text).toBe('echo: hello');
      let streamed = '';
      for await (const chunk of await model.stream('streamer: go')) streamed += chunk.text;
      expect(streamed).toBe('Hello world');
      expect(sent.map((body) => [body.path, body.stream])).toEqual([
        ['/v1/chat/completions', false],
        ['/v1/chat/completions', true],
      ]);
    });

    it('resending the history, the orchestrator sees every earlier turn on the third request', async () => {
      await converse(chat(false), ['red', 'green', 'blue']);
      expect(sent.at(-1)?.messages).toHaveLength(6);
      expect(lastSeen()).toEqual([
        'user: red',
        'assistant: echo: red',
        'user: green',
        'assistant: echo: green',
        'user: blue',
      ]);
    });
  });
});
