/**
 * Starts the interop example: `pnpm --filter @switchboard/example-interop start`.
 * The `money` agent uses the tools of an MCP server the app starts over stdio
 * (src/currency-mcp-server.ts); the app itself is served over MCP at `/mcp`.
 * With `OPENAI_API_KEY` the agent's model is real (`OPENAI_MODEL`, default
 * `gpt-4o-mini`; `OPENAI_BASE_URL` for any OpenAI-compatible endpoint);
 * without it, a scripted stand-in model on loopback. `PORT` (default 3000)
 * and `HOST` (default 127.0.0.1) say where it listens; `TRAVEL_AGENT_URL` adds
 * the A2A agent of src/a2a-agent-server.ts, served by a second process.
 *
 * @module
 */
import type { Agent } from '@switchboard/runtime';
import { a2aAgent } from '@switchboard/runtime/a2a';
import { buildApp } from './app.js';

const { OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL } = process.env;
const model = OPENAI_MODEL || 'gpt-4o-mini';
const offline = OPENAI_API_KEY ? undefined : await (await import('./offline-model.js')).startOfflineModel();

// Agents served by other processes join here: with TRAVEL_AGENT_URL (e.g. http://127.0.0.1:3001, where
// `pnpm --filter @switchboard/example-interop a2a-agent` serves one), weather questions go to that A2A agent.
const remoteAgents: Agent[] = [];
if (process.env.TRAVEL_AGENT_URL) {
  remoteAgents.push(
    await a2aAgent({
      url: process.env.TRAVEL_AGENT_URL,
      name: 'travel',
      description:
        'Travel questions (weather in Lisbon, Oslo, Tokyo), answered by an A2A agent in another process',
      keywords: ['weather', 'forecast', 'temperature'],
    }),
  );
}

const { app, orchestrator } = buildApp({
  model,
  apiKey: OPENAI_API_KEY || 'offline',
  baseURL: offline?.url ?? (OPENAI_BASE_URL || undefined),
  remoteAgents,
});
const server = await app.start(orchestrator, {
  port: Number(process.env.PORT ?? 3000),
  host: process.env.HOST ?? '127.0.0.1',
});
console.log(
  `interop example listening on ${server.url} (${offline ? 'offline: scripted model' : `model ${model}`})`,
);
console.log(
  `Try: curl -s ${server.url}/v1/chat -H 'content-type: application/json' -d '{"message":"convert 100 EUR to USD"}'`,
);
console.log(`MCP clients: ${server.url}/mcp (tool "chat")`);
// close() lets running turns finish and stops the MCP server's process.
const shutdown = () => void server.close().finally(() => offline?.close());
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
