// Switchboard's POST /v1/chat: keyword routing to a trivial agent, in-memory store by default.
// BENCH_STORE=redis uses Redis (REDIS_URL, default redis://127.0.0.1:6379) under a throwaway key prefix.
// BENCH_TRACING=1 exports every span to a loopback OTLP sink (see BENCH_OTLP_URL).
// BENCH_API_KEY turns API keys on, with that one key of a tenant `bench` (the `auth` variant).
// BENCH_EVENT_LOG=off runs without the turn event log (the `nolog` variants); BENCH_EVENT_LOG_MAX=<n> keeps the
// in-memory log's last n events instead of its default 10,000 (what docs/guides/streaming.md measures).
// BENCH_LOGGER=default keeps the app's default logger (pino at info, a request line per request: `logged`).
import { App, apiKeys, InMemoryTurnEventLog } from '@switchboard/runtime';
import { benchAgents, benchOrchestrator } from './orchestrator.js';
import { reportWhenListening } from './report.js';
import { benchStores } from './stores.js';
import { benchTracing } from './tracing.js';

const tracing = await benchTracing();
const stores = await benchStores();
const apiKey = process.env.BENCH_API_KEY;
const auth = apiKey ? apiKeys({ keys: { [apiKey]: { tenantId: 'bench', name: 'bench' } } }) : undefined;
const maxEvents = process.env.BENCH_EVENT_LOG_MAX;
const eventLog =
  process.env.BENCH_EVENT_LOG === 'off'
    ? { eventLog: false as const }
    : maxEvents && !stores.eventLog
      ? { eventLog: new InMemoryTurnEventLog({ maxEvents: Number(maxEvents) }) }
      : {};
const app = new App({
  name: 'bench',
  agents: benchAgents(),
  ...stores,
  ...eventLog,
  tracing,
  auth,
  logger: process.env.BENCH_LOGGER === 'default' ? undefined : () => {},
});
const server = await app.start(benchOrchestrator(app), { port: 0 });
reportWhenListening(server.url);
process.once('disconnect', () => void server.close());
process.once('SIGINT', () => process.exit(0));
