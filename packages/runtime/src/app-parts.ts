/**
 * What an `App` makes of its options when it is made: its stores (in memory
 * unless given), its live configuration, its logger and metrics; the
 * options it only uses later are checked now, so that a mistake fails at
 * construction rather than at the first request.
 *
 * @module
 */
import type { AppOptions } from './app-options.js';
import { checkBudgetOptions } from './budgets/budget-options.js';
import { ConfigCache } from './config/config-cache.js';
import type { ConfigStore } from './config/config-store.js';
import { InMemoryConfigStore } from './config/in-memory-config-store.js';
import { type Logger, resolveLogger } from './logging/logger.js';
import { type AppMetrics, appMetrics } from './metrics/prometheus-metrics.js';
import { clientAddressOf } from './server/client-address.js';
import { checkCorsOptions } from './server/cors.js';
import { InMemoryMemoryStore } from './stores/in-memory-memory-store.js';
import { InMemorySessionStore } from './stores/in-memory-session-store.js';
import { InMemoryTurnEventLog } from './stores/in-memory-turn-event-log.js';
import type { MemoryStore } from './stores/memory-store.js';
import { InMemoryRateLimiter, type RateLimiter } from './stores/rate-limiter.js';
import type { SessionStore } from './stores/session-store.js';
import type { TurnEventLog } from './stores/turn-event-log.js';

/** The stores and services an app holds from construction to close. */
export interface AppParts {
  readonly sessions: SessionStore;
  readonly memory: MemoryStore;
  /** Undefined with `eventLog: false`. */
  readonly events: TurnEventLog | undefined;
  readonly rateLimiter: RateLimiter;
  readonly configStore: ConfigStore;
  /** The configuration as the turns read it, cached from `configStore`. */
  readonly configCache: ConfigCache;
  readonly logger: Logger;
  /** The app's own meter provider and Prometheus route (undefined without `metrics`). */
  readonly metrics: AppMetrics | undefined;
}

/** The app's parts, as its options give them or by default; fails on an option that cannot work. */
export function resolveAppParts(options: AppOptions): AppParts {
  const { name, sessionStore, memoryStore, sessionIdleTtlSeconds } = options;
  const sessions = sessionStore ?? new InMemorySessionStore({ idleTtlSeconds: sessionIdleTtlSeconds });
  const memory = memoryStore ?? new InMemoryMemoryStore();
  const events = options.eventLog === false ? undefined : (options.eventLog ?? new InMemoryTurnEventLog());
  const rateLimiter = options.rateLimiter ?? new InMemoryRateLimiter();
  const configStore = options.configStore ?? new InMemoryConfigStore();
  const configCache = new ConfigCache(configStore);
  if (options.cors) checkCorsOptions(options.cors);
  // A trusted proxy that is neither an address nor a range fails now rather than at mount.
  clientAddressOf(options.rateLimit?.trustedProxies);
  if (options.budgets !== undefined) checkBudgetOptions(options.budgets);
  const logger = resolveLogger(options.logger, options.logLevel);
  const { metrics } = options;
  return {
    sessions,
    memory,
    events,
    rateLimiter,
    configStore,
    configCache,
    logger,
    metrics: metrics ? appMetrics(metrics === true ? {} : metrics, { appName: name }) : undefined,
  };
}
