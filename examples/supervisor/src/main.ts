/**
 * Starts the supervisor example: `pnpm --filter @switchboard/example-supervisor start`.
 * With `OPENAI_API_KEY` the supervisor is a real model (`OPENAI_MODEL`, default
 * `gpt-4o-mini`; `OPENAI_BASE_URL` for any OpenAI-compatible endpoint). Without
 * it, a scripted stand-in model on loopback decomposes and synthesises, so the
 * example runs offline. `SERVICES_DOWN` (comma-separated: `flights`, `hotels`,
 * `weather`) takes booking services down; `PORT` (default 3000) and `HOST`
 * (default 127.0.0.1) say where it listens. Traces go to Langfuse with
 * `LANGFUSE_PUBLIC_KEY`, `LANGFUSE_SECRET_KEY` and `LANGFUSE_BASE_URL` (or to any
 * OTLP backend with `OTEL_EXPORTER_OTLP_ENDPOINT`).
 *
 * @module
 */
import { setupTracing } from '@switchboard/runtime/otel';
import { buildApp } from './app.js';
import { SimulatedTravelServices, type TravelService } from './travel-services.js';

const SERVICES: readonly string[] = ['flights', 'hotels', 'weather'] satisfies TravelService[];

const { OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL, SERVICES_DOWN = '' } = process.env;
const model = OPENAI_MODEL || 'gpt-4o-mini';
// Imported only offline: the stand-in model comes from the runtime's testing subpath.
const offline = OPENAI_API_KEY ? undefined : await (await import('./offline-model.js')).startOfflineModel();
const down = SERVICES_DOWN.split(',').filter((name): name is TravelService => SERVICES.includes(name));
const tracing = setupTracing();

const { app, orchestrator } = buildApp({
  model,
  apiKey: OPENAI_API_KEY || 'offline',
  baseURL: offline?.url ?? (OPENAI_BASE_URL || undefined),
  services: new SimulatedTravelServices({ down }),
  tracing,
});
const server = await app.start(orchestrator, {
  port: Number(process.env.PORT ?? 3000),
  host: process.env.HOST ?? '127.0.0.1',
});
console.log(
  `supervisor example listening on ${server.url} (${offline ? 'offline: scripted model' : `model ${model}`}${down.length ? `, down: ${down.join(', ')}` : ''})`,
);
console.log(
  tracing.enabled ? `Tracing to ${tracing.destinations.join(', ')}` : 'Tracing off (set LANGFUSE_*)',
);
console.log(
  `Try: curl -s ${server.url}/v1/chat -H 'content-type: application/json' -d '{"message":"Plan a weekend in Rome: flights, a hotel and the weather"}'`,
);
// close() lets running turns finish and flushes the last spans.
const shutdown = () => void server.close().finally(() => offline?.close());
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
