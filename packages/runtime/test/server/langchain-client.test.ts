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

  /** What the orchestrator sees on the last of `texts` when the echo agent answered each earlier one. */
  const echoed = (texts: string[]) =>
    texts.flatMap((text, index) =>
      index < texts.length - 1 ? [`user: ${text}`, `assistant: echo: ${text}`] : [`user: ${text}`],
    );

  /** `invoke` and `stream` get the agents' answers, both sent to `path`. */
  const expectAnswers = async (model: ChatOpenAI, path: string) => {
    expect((await model.invoke('hello')).text).toBe('echo: hello');
    let streamed = '';
    for await (const chunk of await model.stream('streamer: go')) streamed += chunk.text;
    expect(streamed).toBe('Hello world');
    expect(sent.map((body) => [body.path, body.stream])).toEqual([
      [path, false],
      [path, true],
    ]);
  };

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
      await expectAnswers(chat(true), '/v1/responses');
    });

    it('chains a turn with previous_response_id from the answer’s metadata', async () => {
      const model = chat(true);
      const first = await model.invoke('one');
      const second = await model.invoke('two', {
        previous_response_id: String(first.response_metadata.id),
      });
      expect(second.text).toBe('echo: two');
      expect(lastSeen()).toEqual(echoed(['one', 'two']));
    });

    it('resending the history (its answers as output messages with ids), the orchestrator sees every earlier turn', async () => {
      const history = await converse(chat(true), ['alpha', 'beta', 'gamma']);
      expect(history.at(-1)?.text).toBe('echo: gamma');
      expect(lastSeen()).toEqual(echoed(['alpha', 'beta', 'gamma']));
    });
  });

  describe('with chat completions (the default)', () => {
    it('gets answers from invoke and stream, over /v1/chat/completions', async () => {
      await expectAnswers(chat(false), '/v1/chat/completions');
    });

    it('resending the history, the orchestrator sees every earlier turn on the third request', async () => {
      await converse(chat(false), ['red', 'green', 'blue']);
      expect(sent.at(-1)?.messages).toHaveLength(6);
      expect(lastSeen()).toEqual(echoed(['red', 'green', 'blue']));
    });
  });
});
