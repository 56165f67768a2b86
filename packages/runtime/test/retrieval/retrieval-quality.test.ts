import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresVectorStore } from '../../src/postgres.js';
import { openAIEmbedder } from '../../src/retrieval/embedder.js';
import { InMemoryVectorStore } from '../../src/retrieval/memory-vector-store.js';
import type { VectorStore } from '../../src/retrieval/vector-store.js';
import { createScriptedModelServer } from '../../src/testing/scripted-model-server.js';
import { usePostgres } from '../support/postgres.js';
import { HELP_DESK_DOCUMENTS, HELP_DESK_QUERIES, recallAt } from './fixtures/help-desk.js';

const postgres = usePostgres();
const server = await createScriptedModelServer();
afterAll(() => server.close());

/** Recall@5 (and recall@1, printed) of `store` over the labelled queries. */
async function recallOf(store: VectorStore, label: string): Promise<number> {
  await store.add(HELP_DESK_DOCUMENTS);
  const found = [];
  for (const { query } of HELP_DESK_QUERIES)
    found.push((await store.search(query, { topK: 5 })).map((match) => match.documentId));
  const [at5, at1] = [recallAt(5, found), recallAt(1, found)];
  console.log(
    `${label}: recall@5 ${at5.toFixed(3)}, recall@1 ${at1.toFixed(3)} over ${found.length} queries`,
  );
  return at5;
}

// 18 labelled queries over 20 documents; a store that ranked at random would find about a quarter.
describe('retrieval quality on the labelled help-desk set', () => {
  it('in memory, cosine over the scripted (hashed bag-of-words) embeddings: recall@5 of at least 0.8', async () => {
    const embed = openAIEmbedder({
      model: 'hash-embed',
      client: new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 }),
    });
    const recall = await recallOf(new InMemoryVectorStore({ embed }), 'in memory (hashed embeddings)');
    expect(recall).toBeGreaterThanOrEqual(0.8);
  });

  it('on PostgreSQL full-text ranking: recall@5 of at least 0.8', async () => {
    const store = await createPostgresVectorStore({ sql: postgres.sql, schema: postgres.schema() });
    const recall = await recallOf(store, `PostgreSQL (${store.ranking})`);
    expect(recall).toBeGreaterThanOrEqual(0.8);
  });
});
