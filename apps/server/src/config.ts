import { ConfigurationError } from '@switchboard/core';
import { KEY_SCOPES } from '@switchboard/runtime';
import { z } from 'zod';

const ORCHESTRATORS = ['keyword', 'round-robin', 'task', 'llm', 'supervisor', 'plan', 'meta'] as const;
/** The orchestrators that decide with a language model, so need `OPENAI_API_KEY`. */
const MODEL_ORCHESTRATORS: readonly ServerConfig['ORCHESTRATOR'][] = ['llm', 'supervisor', 'plan', 'meta'];
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** A switch read as `on`/`off` (or `true`/`false`, `1`/`0`), as a boolean. */
function onOff(name: string, fallback: 'on' | 'off') {
  return z
    .enum(['on', 'off', 'true', 'false', '1', '0'], { error: `${name} must be on or off` })
    .default(fallback)
    .transform((value) => value === 'on' || value === 'true' || value === '1');
}

/** The demo server's environment variables, each with its type, bounds and default (the docs' configuration page is generated from it). */
export const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  ORCHESTRATOR: z
    .enum(ORCHESTRATORS, { error: `ORCHESTRATOR must be one of ${ORCHESTRATORS.join(', ')}` })
    .default('keyword'),
  REDIS_URL: z.string().url().optional(),
  REDIS_KEY_PREFIX: z.string().default('switchboard:'),
  // Compact Redis records (the default); off while replicas of the previous version share the Redis.
  REDIS_COMPACT_RECORDS: onOff('REDIS_COMPACT_RECORDS', 'on'),
  // How long a replica's liveness key outlives its last refresh: a dead replica's sessions move on after about this.
  REDIS_LIVENESS_TTL_MS: z.coerce.number().int().min(30).default(1_200),
  SWEEP_INTERVAL_MS: z.coerce.number().int().min(100).default(10_000),
  /** Background turns this replica runs at once (through BullMQ with REDIS_URL, else in this process). */
  BACKGROUND_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  // Start even though Redis's maxmemory-policy may evict sessions (otherwise the start-up stops).
  SWITCHBOARD_ALLOW_EVICTION: onOff('SWITCHBOARD_ALLOW_EVICTION', 'off'),
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_BASE_URL: z.string().url().optional(),
  OPENAI_MODEL: z.string().min(1).default('gpt-4o-mini'),
  SESSION_IDLE_TTL_SECONDS: z.coerce.number().int().positive().default(86_400),
  AGENT_TIMEOUT_MS: z.coerce.number().int().positive().default(60_000),
  SESSION_WAIT_MS: z.coerce.number().int().positive().default(10_000),
  LEASE_TTL_MS: z.coerce.number().int().positive().default(30_000),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().positive().max(600_000).default(10_000),
  LOG_LEVEL: z
    .enum(LOG_LEVELS, { error: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}` })
    .default('info'),
  SWITCHBOARD_API_KEYS: z
    .string()
    .transform((text, context) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        context.addIssue({
          code: 'custom',
          message: 'SWITCHBOARD_API_KEYS must be JSON: {"<key>": {"tenantId": "…", "name": "…"}}',
        });
        return z.NEVER;
      }
    })
    .pipe(
      z.record(
        // A key in clear (16 characters at least), or its digest: `sha256:<64 hex digits>`.
        z
          .string()
          .min(16, 'API keys must be at least 16 characters long')
          .refine((key) => !/^sha256:/i.test(key) || /^sha256:[0-9a-f]{64}$/i.test(key), {
            message: 'A hashed API key is sha256: followed by 64 hex digits',
          }),
        z.object({
          tenantId: z.string().min(1),
          name: z.string().min(1).optional(),
          userId: z.string().min(1).optional(),
          scopes: z.array(z.enum(KEY_SCOPES)).optional(),
          expiresAt: z.iso.datetime({ offset: true }).optional(),
          requestsPerMinute: z.number().int().positive().optional(),
        }),
      ),
    )
    .optional(),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().optional(),
  // With API keys: failed authentications and public-route requests per client address a minute (429 past them).
  FAILED_AUTH_PER_MINUTE: z.coerce.number().int().positive().default(30),
  PUBLIC_REQUESTS_PER_MINUTE: z.coerce.number().int().positive().default(600),
  // Comma-separated addresses or ranges (10.0.0.0/8) of the proxies whose X-Forwarded-For names the client.
  TRUSTED_PROXIES: z
    .string()
    .default('')
    .transform((value) =>
      value
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean),
    ),
  // Without Redis: the most sessions kept in memory (shared fairly between tenants), and awaiting approval per tenant.
  MAX_SESSIONS: z.coerce.number().int().positive().default(10_000),
  MAX_PENDING_APPROVALS_PER_TENANT: z.coerce.number().int().positive().default(1_000),
  EXPOSE_ERROR_DETAILS: z
    .enum(['true', 'false', '1', '0'], { error: 'EXPOSE_ERROR_DETAILS must be true or false' })
    .default('false')
    .transform((value) => value === 'true' || value === '1'),
  DOCS: onOff('DOCS', 'on'),
  CONSOLE: onOff('CONSOLE', 'on'),
  // The orchestrator as an A2A agent: its card at /.well-known/agent-card.json, JSON-RPC at /a2a.
  A2A: onOff('A2A', 'on'),
  // The URL clients reach the server at (behind a proxy), for the agent card's endpoint URL.
  A2A_PUBLIC_URL: z.string().url().optional(),
  // Without A2A_PUBLIC_URL: Host values (comma-separated, name or name:port) whose origin the card may name, besides loopback.
  A2A_TRUSTED_HOSTS: z
    .string()
    .optional()
    .transform((value) =>
      (value ?? '')
        .split(',')
        .map((host) => host.trim())
        .filter((host) => host.length > 0),
    ),
  // The orchestrator over MCP: a chat tool at POST /mcp (streamable HTTP), behind SWITCHBOARD_API_KEYS when set.
  MCP: onOff('MCP', 'on'),
  // Prometheus text at GET /metrics (behind SWITCHBOARD_API_KEYS when set); OTLP push when OTEL_EXPORTER_OTLP_ENDPOINT is set.
  METRICS: onOff('METRICS', 'off'),
  LANGFUSE_PUBLIC_KEY: z.string().min(1).optional(),
  LANGFUSE_BASE_URL: z.string().url().default('https://cloud.langfuse.com'),
  // Demo only: every offline agent waits this long before it answers, to watch a slow turn (e.g. a graceful stop).
  DEMO_AGENT_DELAY_MS: z.coerce.number().int().min(0).max(600_000).optional(),
});

/** Where a problem is, for the error message; an API key (a record key of SWITCHBOARD_API_KEYS) is never named. */
function pathOf(path: readonly PropertyKey[]): string {
  const shown = path.map((part, index) =>
    index === 1 && path[0] === 'SWITCHBOARD_API_KEYS' ? '<key>' : String(part),
  );
  return shown.join('.');
}

/** The server's configuration, read from environment variables. */
export type ServerConfig = z.infer<typeof EnvSchema>;

/** Reads and checks the environment; throws one `ConfigurationError` listing every problem on one line. */
export function readConfig(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = EnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${pathOf(issue.path)}: ${issue.message}`).join('; ');
    throw new ConfigurationError({ message: `invalid configuration: ${problems}` });
  }
  if (MODEL_ORCHESTRATORS.includes(parsed.data.ORCHESTRATOR) && !parsed.data.OPENAI_API_KEY) {
    throw new ConfigurationError({
      message: `ORCHESTRATOR=${parsed.data.ORCHESTRATOR} needs OPENAI_API_KEY (and optionally OPENAI_BASE_URL for any OpenAI-compatible endpoint, OPENAI_MODEL)`,
    });
  }
  return parsed.data;
}

/** A URL without its password, for logs. */
export function redactUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}
