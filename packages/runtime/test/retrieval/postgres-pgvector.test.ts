import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import OpenAI from 'openai';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresVectorStore } from '../../src/postgres.js';
import { openAIEmbedder } from '../../src/retrieval/embedder.js';
import {
  createScriptedModelServer,
  type ScriptedModelServer,
} from '../../src/testing/scripted-model-server.js';
import { HELP_DESK_DOCUMENTS, HELP_DESK_QUERIES, recallAt } from './fixtures/help-desk.js';
import { describeVectorStoreContract } from './vector-store.contract.js';

// The machine's PostgreSQL has no pgvector: the cosine path runs on PGlite (PostgreSQL in WebAssembly, with
// its pgvector extension) served over the wire protocol, so the store's own driver and SQL are what is tested.
let database: PGlite;
let socketServer: PGLiteSocketServer;
let models: ScriptedModelServer;
let sql: postgres.Sql;
let schemas = 0;

beforeAll(async () => {
  models = await createScriptedModelServer();
  database = await PGlite.create({ extensions: { vector } });
  socketServer = new PGLiteSocketServer({ db: database, port: 0, host: '127.0.0.1' });
  await socketServer.start();
  sql = postgres(`postgres://postgres@${socketServer.getServerConn()}/postgres`, {
    max: 1,
    onnotice: () => {},
  });
  // PGlite compiles PostgreSQL's WebAssembly and runs initdb at start: seconds, and about 25 s on a loaded 2-core machine.
}, 120_000);
afterAll(async () => {
  await sql?.end({ timeout: 2 });
  await socketServer?.stop();
  await database?.close();
  await models?.close();
});

const embed = () =>
  openAIEmbedder({
    model: 'hash-embed',
    client: new OpenAI({ apiKey: 'test', baseURL: models.url, maxRetries: 0 }),
  });

describeVectorStoreContract('PostgreSQL with pgvector (PGlite), cosine ranking', (options) =>
  createPostgresVectorStore({
    sql,
    schema: `pgv_${++schemas}`,
    ranking: 'cosine',
    embed: embed(),
    ...options,
  }),
);

describe('createPostgresVectorStore with pgvector', () => {
  it('picks cosine by itself when the extension is there and an embedder is given, and ranks the labelled set as well as in memory', async () => {
    const store = await createPostgresVectorStore({ sql, schema: `pgv_${++schemas}`, embed: embed() });
    expect(store.ranking).toBe('cosine');
    await store.add(HELP_DESK_DOCUMENTS);
    const found = [];
    for (const { query } of HELP_DESK_QUERIES)
      found.push((await store.search(query, { topK: 5 })).map((match) => match.documentId));
    const recall = recallAt(5, found);
    console.log(
      `PostgreSQL with pgvector (PGlite): recall@5 ${recall.toFixed(3)} over ${found.length} queries`,
    );
    expect(recall).toBeGreaterThanOrEqual(0.8);
  });
});
