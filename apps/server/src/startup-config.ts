import { redactUrl, type ServerConfig } from './config.js';

/**
 * What the server runs with, for its start-up line: every setting an
 * operator chose, and no secret. Built field by field, so that a setting
 * added later stays out of the logs until someone decides it is safe: API
 * keys are counted (their tenants named), the OpenAI and Langfuse keys only
 * said to be set, URLs shown without their password.
 */
export function startupConfig(config: ServerConfig, tracing: readonly string[]): Record<string, unknown> {
  const apiKeys = Object.values(config.SWITCHBOARD_API_KEYS ?? {});
  return {
    host: config.HOST,
    port: config.PORT,
    orchestrator: config.ORCHESTRATOR,
    store: config.REDIS_URL
      ? {
          redisUrl: redactUrl(config.REDIS_URL),
          keyPrefix: config.REDIS_KEY_PREFIX,
          ...(config.SWITCHBOARD_ALLOW_EVICTION ? { allowEviction: true } : {}),
        }
      : 'in-memory',
    openai: config.OPENAI_API_KEY
      ? {
          apiKey: 'set',
          model: config.OPENAI_MODEL,
          baseURL: config.OPENAI_BASE_URL && redactUrl(config.OPENAI_BASE_URL),
        }
      : 'off',
    auth:
      apiKeys.length > 0
        ? { apiKeys: apiKeys.length, tenants: [...new Set(apiKeys.map((key) => key.tenantId))] }
        : 'off',
    rateLimitPerMinute: config.RATE_LIMIT_PER_MINUTE,
    failedAuthPerMinute: config.FAILED_AUTH_PER_MINUTE,
    publicRequestsPerMinute: config.PUBLIC_REQUESTS_PER_MINUTE,
    trustedProxies: config.TRUSTED_PROXIES.length,
    ...(config.REDIS_URL
      ? {}
      : {
          maxSessions: config.MAX_SESSIONS,
          maxPendingApprovalsPerTenant: config.MAX_PENDING_APPROVALS_PER_TENANT,
        }),
    tracing: tracing.length > 0 ? [...tracing] : 'off',
    sessionIdleTtlSeconds: config.SESSION_IDLE_TTL_SECONDS,
    agentTimeoutMs: config.AGENT_TIMEOUT_MS,
    sessionWaitMs: config.SESSION_WAIT_MS,
    leaseTtlMs: config.LEASE_TTL_MS,
    shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
    exposeErrorDetails: config.EXPOSE_ERROR_DETAILS,
    logLevel: config.LOG_LEVEL,
    demoAgentDelayMs: config.DEMO_AGENT_DELAY_MS,
  };
}
