/**
 * Starts the approvals example: `pnpm --filter @switchboard/example-approvals start`.
 * State is in memory unless `REDIS_URL` is set (then `REDIS_KEY_PREFIX`, default
 * `support-desk:`); `ACCOUNTS_UNDER_REVIEW` lists user ids (comma-separated, default
 * `mallory`) whose every request waits for approval; `PORT` (default 3000) and `HOST`
 * (default 127.0.0.1) say where it listens. `LANGFUSE_PUBLIC_KEY`, `LANGFUSE_SECRET_KEY`
 * and `LANGFUSE_BASE_URL` (or `OTEL_EXPORTER_OTLP_ENDPOINT`) turn tracing on: a turn that
 * waits for approval is two linked traces, both the requester's.
 *
 * @module
 */
import { setupTracing } from '@switchboard/runtime/otel';
import { buildApp } from './app.js';

const { REDIS_URL, REDIS_KEY_PREFIX, ACCOUNTS_UNDER_REVIEW = 'mallory' } = process.env;
const tracing = setupTracing();
const { app, orchestrator } = buildApp({
  redis: REDIS_URL ? { url: REDIS_URL, keyPrefix: REDIS_KEY_PREFIX } : undefined,
  accountsUnderReview: ACCOUNTS_UNDER_REVIEW.split(',').filter(Boolean),
  tracing,
});
const server = await app.start(orchestrator, {
  port: Number(process.env.PORT ?? 3000),
  host: process.env.HOST ?? '127.0.0.1',
});
console.log(`approvals example listening on ${server.url} (state ${REDIS_URL ? 'in Redis' : 'in memory'})`);
console.log(
  tracing.enabled ? `Tracing to ${tracing.destinations.join(', ')}` : 'Tracing off (set LANGFUSE_*)',
);
console.log(
  `Try: curl -s ${server.url}/v1/chat -H 'content-type: application/json' -d '{"message":"refund 250 on order 42"}'`,
);
process.once('SIGINT', () => void server.close());
process.once('SIGTERM', () => void server.close());
