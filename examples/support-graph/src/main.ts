/**
 * Starts the support-graph example: `pnpm --filter @switchboard/example-support-graph start`.
 * With `OPENAI_API_KEY` the classifier and the writer are a real model
 * (`OPENAI_MODEL`, default `gpt-4o-mini`; `OPENAI_BASE_URL` for any
 * OpenAI-compatible endpoint); without it a scripted stand-in model on
 * loopback answers, so the example runs offline. `REDIS_URL` keeps sessions
 * and approvals in Redis (several replicas); `PORT` (default 3000) and `HOST`
 * (default 127.0.0.1) say where it listens. The console at `/` draws the graph.
 *
 * @module
 */
import { buildApp } from './app.js';

const { OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL, REDIS_URL } = process.env;
const model = OPENAI_MODEL || 'gpt-4o-mini';
const offline = OPENAI_API_KEY ? undefined : await (await import('./offline-model.js')).startOfflineModel();
// Imported only with Redis: ioredis is loaded by the redis subpath.
const stores = REDIS_URL
  ? (await import('@switchboard/runtime/redis')).createRedisStores(REDIS_URL, { keyPrefix: 'support-graph:' })
  : {};

const { app, orchestrator } = buildApp({
  model,
  apiKey: OPENAI_API_KEY || 'offline',
  baseURL: offline?.url ?? (OPENAI_BASE_URL || undefined),
  console: true,
  maxHops: 10,
  ...stores,
});
const server = await app.start(orchestrator, {
  port: Number(process.env.PORT ?? 3000),
  host: process.env.HOST ?? '127.0.0.1',
});
console.log(
  `support-graph example listening on ${server.url} (${offline ? 'offline: scripted model' : `model ${model}`})`,
);
console.log(orchestrator.toMermaid());
console.log(
  `Try: curl -s ${server.url}/v1/chat -H 'content-type: application/json' -d '{"message":"acme: please refund 250 EUR for the double charge"}'`,
);
const shutdown = () => void server.close().finally(() => offline?.close());
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
