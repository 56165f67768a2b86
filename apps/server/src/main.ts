import { bullmqTurnQueue } from '@switchboard/runtime/bullmq';
import { setupTracing } from '@switchboard/runtime/otel';
import { createRedisStores } from '@switchboard/runtime/redis';
import { buildServerApp } from './build-app.js';
import { readConfig, redactUrl } from './config.js';
import { createServerLogger } from './server-logger.js';
import { startupConfig } from './startup-config.js';
import { exitOnStartupFailure } from './startup-failure.js';

// Until the server listens, an error (bad configuration, port in use) ends the start-up with one line.
process.once('uncaughtException', exitOnStartupFailure);

const config = readConfig();
// JSON lines on stdout; readable lines in a terminal. LOG_LEVEL sets the level.
const logger = await createServerLogger(config.LOG_LEVEL);

// Exports to Langfuse (LANGFUSE_*) or any OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT) when configured.
const tracing = setupTracing();
// With REDIS_URL every replica shares sessions, leases and memory; otherwise state lives in this process.
const stores = config.REDIS_URL
  ? {
      ...createRedisStores(config.REDIS_URL, {
        keyPrefix: config.REDIS_KEY_PREFIX,
        idleTtlSeconds: config.SESSION_IDLE_TTL_SECONDS,
        compactRecords: config.REDIS_COMPACT_RECORDS,
        livenessTtlMs: config.REDIS_LIVENESS_TTL_MS,
        allowEviction: config.SWITCHBOARD_ALLOW_EVICTION,
      }),
      storeName: `redis ${redactUrl(config.REDIS_URL)} (prefix ${config.REDIS_KEY_PREFIX})`,
      // Background turns go to whichever replica is free, and survive one that dies.
      queue: bullmqTurnQueue({
        connection: config.REDIS_URL,
        prefix: `${config.REDIS_KEY_PREFIX}bull`,
        concurrency: config.BACKGROUND_CONCURRENCY,
      }),
    }
  : {};
const { app, orchestrator, description, warnings } = buildServerApp(config, { tracing, logger, ...stores });
for (const warning of warnings) logger.warn(warning);
const server = await app.start(orchestrator, { port: config.PORT, host: config.HOST });
process.off('uncaughtException', exitOnStartupFailure);
/** After the grace for running turns, how long closing the stores and exporting the last spans may take. */
const SHUTDOWN_DEADLINE_MS = config.SHUTDOWN_GRACE_MS + 5_000;
let stopping = false;
const shutdown = (signal: NodeJS.Signals) => {
  // Ctrl-C under `pnpm start` arrives twice (from the terminal, and relayed by pnpm): one shutdown, not a kill.
  if (stopping) return logger.debug(`${signal} received again: still finishing running turns`);
  stopping = true;
  logger.info(`${signal} received: finishing running turns…`);
  // close() gives running turns SHUTDOWN_GRACE_MS, then aborts them; this bounds the rest (stores, span export).
  setTimeout(() => {
    logger.error(`the server did not close within ${SHUTDOWN_DEADLINE_MS} ms: exiting`);
    process.exit(1);
  }, SHUTDOWN_DEADLINE_MS).unref();
  server.close().then(
    () => process.exit(0),
    (error: unknown) => {
      logger.error({ err: error }, 'the server did not close cleanly');
      process.exit(1);
    },
  );
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);

// The one line with the whole configuration (no secrets: see startupConfig).
logger.info(
  { url: server.url, config: startupConfig(config, tracing.destinations) },
  `Switchboard listening on ${server.url} (${description})`,
);
logger.info(
  tracing.enabled
    ? `Tracing to ${tracing.destinations.join(' and ')}`
    : 'Tracing off (set LANGFUSE_* or OTEL_EXPORTER_OTLP_ENDPOINT)',
);
logger.info(
  `Try: curl -s ${server.url}/v1/chat -H 'content-type: application/json' -d '{"message":"what is 2 + 3 * 4?"}'`,
);
