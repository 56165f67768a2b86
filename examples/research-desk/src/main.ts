/**
 * Starts the research desk example: `pnpm --filter @switchboard/example-research-desk start`.
 * With `OPENAI_API_KEY` every model call is a real model (`OPENAI_MODEL`,
 * default `gpt-4o-mini`; `OPENAI_EMBEDDING_MODEL`, default
 * `text-embedding-3-small`; `OPENAI_BASE_URL` for any OpenAI-compatible
 * endpoint); without it a scripted stand-in model on loopback answers, so
 * the example runs offline. `DATABASE_URL` keeps the library in PostgreSQL
 * (pgvector when installed, else full-text ranking); `WEB_SEARCH_UP=1`
 * makes the web search work (by default it is down, to show the breaker).
 * `PORT` (default 3000) and `HOST` (default 127.0.0.1) say where it listens.
 *
 * @module
 */
import { buildApp } from './app.js';
import { openLibrary } from './library.js';
import { SimulatedWebSearch } from './web-search.js';

const { OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL, OPENAI_EMBEDDING_MODEL, DATABASE_URL } = process.env;
const model = OPENAI_MODEL || 'gpt-4o-mini';
const offline = OPENAI_API_KEY ? undefined : await (await import('./offline-model.js')).startOfflineModel();
const apiKey = OPENAI_API_KEY || 'offline';
const baseURL = offline?.url ?? (OPENAI_BASE_URL || undefined);

const store = await openLibrary({
  embeddingModel: OPENAI_EMBEDDING_MODEL || 'text-embedding-3-small',
  apiKey,
  baseURL,
  databaseUrl: DATABASE_URL || undefined,
});
const web = new SimulatedWebSearch({ down: process.env.WEB_SEARCH_UP !== '1' });
const { app, orchestrator } = buildApp({ model, apiKey, baseURL, store, web, console: true });
const server = await app.start(orchestrator, {
  port: Number(process.env.PORT ?? 3000),
  host: process.env.HOST ?? '127.0.0.1',
});
console.log(
  `research-desk example listening on ${server.url} (${offline ? 'offline: scripted model' : `model ${model}`}; library ${DATABASE_URL ? 'on PostgreSQL' : 'in memory'}, ${store.ranking} ranking)`,
);
console.log(
  `Try: curl -s ${server.url}/v1/chat -H 'content-type: application/json' -d '{"message":"How efficient is pumped hydro storage?"}'`,
);
const shutdown = () =>
  void server
    .close()
    .then(() => store.close?.())
    .finally(() => offline?.close());
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
