/**
 * Starts the guarded research example:
 * `pnpm --filter @switchboard/example-guarded-research start`. It runs
 * offline: the agents are functions over an in-file library and the critic
 * is a function. With `OPENAI_API_KEY` the critic is a model judge instead
 * (`OPENAI_MODEL`, default `gpt-4o-mini`; `OPENAI_BASE_URL` for any
 * OpenAI-compatible endpoint). `SEARCH_BUSY` (default 1) is how many
 * searches, from the first, the search backend refuses as busy, so that the
 * first question shows a retry. `PORT` (default 3000) and `HOST` (default
 * 127.0.0.1) say where it listens. Traces go to Langfuse with
 * `LANGFUSE_PUBLIC_KEY`, `LANGFUSE_SECRET_KEY` and `LANGFUSE_BASE_URL` (or
 * to any OTLP backend with `OTEL_EXPORTER_OTLP_ENDPOINT`).
 *
 * @module
 */
import { setupTracing } from '@switchboard/runtime/otel';
import { buildApp } from './app.js';
import { modelJudge } from './citation-critic.js';
import { SimulatedSearch } from './library.js';

const { OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL, SEARCH_BUSY = '1' } = process.env;
const model = OPENAI_MODEL || 'gpt-4o-mini';
const busy = Math.max(0, Number.parseInt(SEARCH_BUSY, 10) || 0);
const tracing = setupTracing();

const { app, orchestrator } = buildApp({
  critic: OPENAI_API_KEY
    ? modelJudge({ model, apiKey: OPENAI_API_KEY, baseURL: OPENAI_BASE_URL || undefined })
    : undefined,
  search: new SimulatedSearch({ busy }),
  tracing,
});
const server = await app.start(orchestrator, {
  port: Number(process.env.PORT ?? 3000),
  host: process.env.HOST ?? '127.0.0.1',
});
const busyNote = busy
  ? `its first ${busy === 1 ? 'search finds' : `${busy} searches find`} the backend busy`
  : 'the search backend is never busy';
console.log(
  `guarded research example listening on ${server.url} (critic: ${OPENAI_API_KEY ? `model ${model}` : 'citation check, offline'}; ${busyNote})`,
);
console.log(
  tracing.enabled ? `Tracing to ${tracing.destinations.join(', ')}` : 'Tracing off (set LANGFUSE_*)',
);
console.log(
  `Try: curl -s ${server.url}/v1/chat -H 'content-type: application/json' -d '{"sessionId":"demo","message":"I am jane@example.com. How do heat pumps work in cold climates, and what do they cost?"}'`,
);
// close() lets running turns finish and flushes the last spans.
const shutdown = () => void server.close();
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
