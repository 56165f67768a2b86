/**
 * Starts the LangGraph example: `pnpm --filter @switchboard/example-langgraph-agent start`.
 * State (sessions and the graph's checkpoints) is in memory unless `REDIS_URL` is set
 * (then `REDIS_KEY_PREFIX`, default `returns-desk:`); `PORT` (default 3000) and `HOST`
 * (default 127.0.0.1) say where it listens.
 *
 * @module
 */
import { buildApp } from './app.js';

const { REDIS_URL, REDIS_KEY_PREFIX } = process.env;
const { app, orchestrator, disconnect } = buildApp({
  redis: REDIS_URL ? { url: REDIS_URL, keyPrefix: REDIS_KEY_PREFIX } : undefined,
});
const server = await app.start(orchestrator, {
  port: Number(process.env.PORT ?? 3000),
  host: process.env.HOST ?? '127.0.0.1',
});
console.log(`langgraph example listening on ${server.url} (state ${REDIS_URL ? 'in Redis' : 'in memory'})`);
console.log(
  `Try: curl -s ${server.url}/v1/chat -H 'content-type: application/json' -d '{"message":"refund 250 on order 42"}'`,
);
const stop = () => void server.close().then(disconnect);
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
