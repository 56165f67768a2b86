import {
  AbstractOrchestrator,
  ConfigurationError,
  type Conversation,
  currentUserMessage,
  latestToolResults,
  routeToUser,
  type ToolMessage,
  toolCall,
} from '@switchboard/core';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { App } from '../../src/app.js';
import { openAIEmbedder } from '../../src/retrieval/embedder.js';
import { InMemoryVectorStore } from '../../src/retrieval/memory-vector-store.js';
import { retrievalAgent } from '../../src/retrieval/retrieval-agent.js';
import { retrievalBundleOf } from '../../src/retrieval/retrieval-bundle.js';
import {
  createScriptedModelServer,
  type ScriptedModelServer,
} from '../../src/testing/scripted-model-server.js';
import { recordSpans, type SpanRecording } from '../../src/testing/span-recorder.js';
import { HELP_DESK_DOCUMENTS } from './fixtures/help-desk.js';

let server: ScriptedModelServer;
let client: OpenAI;
let store: InMemoryVectorStore;
let recording: SpanRecording;

beforeAll(async () => {
  server = await createScriptedModelServer();
  client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
  store = new InMemoryVectorStore({ embed: openAIEmbedder({ model: 'hash-embed', client }) });
  await store.add(HELP_DESK_DOCUMENTS, { tenantId: 'acme' });
  recording = recordSpans();
});
afterEach(() => recording.reset());
afterAll(async () => {
  await recording.shutdown();
  server.assertDone();
  await server.close();
});

/** Sends the user's message to `docs` (with the structured input the test sets), then answers with its reply, which it keeps in `seen`. */
function askDocs(seen: ToolMessage[], input?: Record<string, unknown>) {
  return class AskDocs extends AbstractOrchestrator {
    protected handleMessage(conversation: Conversation) {
      const [reply] = latestToolResults(conversation);
      if (reply) {
        seen.push(reply);
        return routeToUser(reply.content);
      }
      return toolCall('docs', currentUserMessage(conversation).content, input ? { input } : {});
    }
  };
}

async function ask(
  agent: ReturnType<typeof retrievalAgent>,
  message: string,
  tenantId = 'acme',
  input?: Record<string, unknown>,
) {
  const seen: ToolMessage[] = [];
  const app = new App({ name: 'desk', agents: [agent] }).mount(askDocs(seen, input));
  try {
    const result = await app.chat({ message, tenantId });
    const [reply] = seen;
    return { result, reply, bundle: retrievalBundleOf(reply) };
  } finally {
    await app.close();
  }
}

describe('retrievalAgent', () => {
  it('answers with a bundle of at most topK scored items, their sources and a snippet summary, as text and as data', async () => {
    const docs = retrievalAgent({ name: 'docs', store, topK: 3 });
    const { result, bundle } = await ask(
      docs,
      'how many business days until my refund reaches the payment card',
    );
    expect(bundle?.items.length).toBeGreaterThan(0);
    expect(bundle?.items.length).toBeLessThanOrEqual(3);
    expect(bundle?.items[0]).toMatchObject({ documentId: 'refund-timing', source: 'refund-timing' });
    const scores = bundle?.items.map((item) => item.score) ?? [];
    for (const score of scores) expect(score).toBeGreaterThan(0);
    for (const score of scores) expect(score).toBeLessThanOrEqual(1);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(bundle?.sources).toEqual([...new Set(bundle?.items.map((item) => item.source))]);
    expect(bundle).toMatchObject({ kind: 'retrieval', summarizedBy: 'snippets', ranking: 'cosine' });
    expect(bundle?.summary).toContain('original payment card');
    expect(result.reply).toContain('Sources:');
    expect(result.reply).toContain('[1] refund-timing (score');
  });

  it('records each search as a retriever observation under the agent span, with the query in and ids and scores out', async () => {
    const docs = retrievalAgent({ name: 'docs', store, topK: 2 });
    await ask(docs, 'reset my password');
    const [search] = recording.named('retrieve');
    expect(search?.attributes['langfuse.observation.type']).toBe('retriever');
    expect(JSON.parse(String(search?.attributes['langfuse.observation.input']))).toMatchObject({
      query: 'reset my password',
      topK: 2,
    });
    const output = JSON.parse(String(search?.attributes['langfuse.observation.output']));
    expect(output[0]).toMatchObject({ id: 'password-reset#0', source: 'password-reset' });
    expect(output[0].text).toBeUndefined();
    expect(recording.parentOf(search as never)?.name).toContain('docs');
  });

  it('has the summary written by a model when given one, from the retrieved passages', async () => {
    server.push({ content: 'Refunds reach the original card within five business days [1].' });
    const docs = retrievalAgent({ name: 'docs', store, topK: 2, summarize: { model: 'summary-1', client } });
    const { bundle } = await ask(docs, 'how many business days until my refund reaches the payment card');
    expect(bundle).toMatchObject({
      summarizedBy: 'model',
      summary: 'Refunds reach the original card within five business days [1].',
    });
    const request = server.requests.at(-1)?.body;
    expect(JSON.stringify(request?.messages)).toContain('[1] (refund-timing)');
    expect(
      recording.spans.some((span) => span.attributes['langfuse.observation.type'] === 'generation'),
    ).toBe(true);
  });

  it("searches only the request's tenant", async () => {
    const docs = retrievalAgent({ name: 'docs', store });
    const other = await ask(docs, 'when will I get my refund on my card', 'globex');
    expect(other.bundle).toMatchObject({ items: [], sources: [], summary: 'Nothing relevant was found.' });
  });

  it("takes a call's structured input (query, topK, filter) and refuses an invalid one", async () => {
    const docs = retrievalAgent({ name: 'docs', store, topK: 5 });
    const narrowed = await ask(docs, 'ignored', 'acme', { query: 'refund card warranty', topK: 1 });
    expect(narrowed.bundle?.query).toBe('refund card warranty');
    expect(narrowed.bundle?.items).toHaveLength(1);
    const invalid = await ask(docs, 'refunds', 'acme', { topK: 'many' });
    expect(invalid.reply).toMatchObject({ status: 'error', metadata: { errorCode: 'invalid_agent_input' } });
  });

  it('refuses bad options at construction', () => {
    expect(() => retrievalAgent({ name: 'docs', store: {} as never })).toThrow(ConfigurationError);
    expect(() => retrievalAgent({ name: 'docs', store, topK: 0 })).toThrow(/topK/);
    expect(() => retrievalAgent({ name: 'docs', store, minScore: 2 })).toThrow(/minScore/);
  });
});
