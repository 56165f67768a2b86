/**
 * Starts the traced-orchestrator example: `pnpm --filter @switchboard/example-traced-orchestrator start`.
 * Tracing is configured from the environment: `LANGFUSE_PUBLIC_KEY`, `LANGFUSE_SECRET_KEY`
 * and `LANGFUSE_BASE_URL` for Langfuse, and/or `OTEL_EXPORTER_OTLP_ENDPOINT` for any OTLP
 * backend. `PORT` (default 3000) and `HOST` (default 127.0.0.1) set where it listens.
 *
 * @module
 */
import { setupTracing } from '@switchboard/runtime/otel';
import { buildApp } from './app.js';

const tracing = setupTracing();
const { app, orchestrator } = buildApp({ tracing });
const server = await app.start(orchestrator, {
  port: Number(process.env.PORT ?? 3000),
  host: process.env.HOST ?? '127.0.0.1',
});
console.log(`traced-orchestrator example listening on ${server.url}`);
console.log(
  tracing.enabled
    ? `Tracing to: ${tracing.destinations.join(', ')}`
    : 'Tracing is off: set LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY and LANGFUSE_BASE_URL, or OTEL_EXPORTER_OTLP_ENDPOINT',
);
console.log(
  `Try: curl -s ${server.url}/v1/chat -H 'content-type: application/json' -d '{"message":"I was charged twice, please refund","userId":"ada"}'`,
);
// close() stops the server, lets running turns finish and flushes the spans.
process.once('SIGINT', () => void server.close());
process.once('SIGTERM', () => void server.close());
