import { setupTracing } from '@switchboard/runtime/otel';
import { createRedisStores } from '@switchboard/runtime/redis';
import { buildServerApp } from './build-app.js';
import { readConfig, redactUrl } from './config.js';

let config: ReturnType<typeof readConfig>;
try {
  config = readConfig();
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}

// Exports to Langfuse (LANGFUSE_*) or any OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT) when configured.
const tracing = setupTracing();
// With REDIS_URL every replica shares sessions, leases and memory; otherwise state lives in this process.
const stores = config.REDIS_URL
  ? {
      ...createRedisStores(config.REDIS_URL, {
        keyPrefix: config.REDIS_KEY_PREFIX,
        idleTtlSeconds: config.SESSION_IDLE_TTL_SECONDS,
      }),
      storeName: `redis ${redactUrl(config.REDIS_URL)} (prefix ${config.REDIS_KEY_PREFIX})`,
    }
  : {};
const { app, orchestrator, description } = buildServerApp(config, { tracing, ...stores });
const server = await app.start(orchestrator, { port: config.PORT, host: config.HOST });
const shutdown = (signal: string) => {
  console.log(`${signal} received: finishing running turns…`);
  server.close().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
};
process.once('SIGINT', () => shutdown('SIGINT'));
process.once('SIGTERM', () => shutdown('SIGTERM'));

console.log(`Switchboard listening on ${server.url} (${description})`);
console.log(
  tracing.enabled
    ? `Tracing to ${tracing.destinations.join(' and ')}`
    : 'Tracing off (set LANGFUSE_* or OTEL_EXPORTER_OTLP_ENDPOINT)',
);
console.log(
  `Try: curl -s ${server.url}/v1/chat -H 'content-type: application/json' -d '{"message":"what is 2 + 3 * 4?"}'`,
);
