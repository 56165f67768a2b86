import { ConfigurationError } from '@switchboard/core';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAIEmbedder } from '../../src/retrieval/embedder.js';
import { InMemoryVectorStore } from '../../src/retrieval/memory-vector-store.js';
import {
  createScriptedModelServer,
  type ScriptedModelServer,
} from '../../src/testing/scripted-model-server.js';
import { describeVectorStoreContract } from './vector-store.contract.js';

let server: ScriptedModelServer;
beforeAll(async () => {
  server = await createScriptedModelServer();
});
afterAll(async () => {
  server.assertDone();
  await server.close();
});

const embedder = () =>
  openAIEmbedder({
    model: 'hash-embed',
    client: new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 }),
    batchSize: 8,
  });

describeVectorStoreContract(
  'in memory',
  async (options) => new InMemoryVectorStore({ embed: embedder(), ...options }),
);

describe('InMemoryVectorStore', () => {
  it('embeds through the /v1/embeddings endpoint in batches, once per search', async () => {
    const before = server.requests.length;
    const store = new InMemoryVectorStore({ embed: embedder() });
    const documents = Array.from({ length: 20 }, (_, index) => ({
      id: `d${index}`,
      text: `document number ${index}`,
    }));
    await store.add(documents);
    const adds = server.requests.slice(before);
    expect(adds.map((request) => request.path)).toEqual(Array(3).fill('/v1/embeddings'));
    expect(adds.map((request) => (request.body as unknown as { input: string[] }).input.length)).toEqual([
      8, 8, 4,
    ]);
    await store.search('document number 7');
    expect(server.requests.length - before).toBe(4);
  });

  it('refuses an embedder-less configuration and bad chunking at construction', () => {
    expect(() => new InMemoryVectorStore({} as never)).toThrow(ConfigurationError);
    expect(() => new InMemoryVectorStore({ embed: embedder(), chunkSize: 100, overlap: 60 })).toThrow(
      /overlap/,
    );
    expect(() => openAIEmbedder({ model: '' })).toThrow(/model/);
  });
});

describe('InMemoryVectorStore with another embedding model', () => {
  it('refuses vectors of another length than those it holds, instead of comparing them', async () => {
    let dimensions = 8;
    const store = new InMemoryVectorStore({
      embed: { model: 'changing', embed: async (texts) => texts.map(() => Array(dimensions).fill(1)) },
    });
    await store.add([{ id: 'a', text: 'first' }]);
    dimensions = 16;
    await expect(store.search('first')).rejects.toThrow(/16 dimensions; the store holds 8/);
    await expect(store.add([{ id: 'b', text: 'second' }])).rejects.toThrow(ConfigurationError);
    expect((await store.count()).documents).toBe(1);
  });
});
