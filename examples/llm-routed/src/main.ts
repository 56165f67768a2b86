/**
 * Starts the llm-routed example: `pnpm --filter @switchboard/example-llm-routed start`.
 * Needs `OPENAI_API_KEY`; `OPENAI_BASE_URL` points at any OpenAI-compatible endpoint,
 * `OPENAI_MODEL` names the model (default `gpt-4o-mini`), `PORT` / `HOST` set where it listens.
 * Without a key it exits with code 1 and says what to set.
 *
 * @module
 */
import { buildApp } from './app.js';
import { type LlmRoutedConfig, readConfig } from './config.js';

let config: LlmRoutedConfig;
try {
  config = readConfig(process.env);
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}

const { port, host, ...model } = config;
const { app, orchestrator } = buildApp(model);
const server = await app.start(orchestrator, { port, host });
console.log(
  `llm-routed example listening on ${server.url} (model ${config.model}${config.baseURL ? ` at ${config.baseURL}` : ''})`,
);
console.log(
  `Try: curl -s ${server.url}/v1/chat -H 'content-type: application/json' -d '{"message":"What is the weather in Paris?"}'`,
);
process.once('SIGINT', () => void server.close());
process.once('SIGTERM', () => void server.close());
