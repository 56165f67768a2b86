import { createRequire } from 'node:module';
import type { Orchestrator } from '@switchboard/core';
import {
  KeywordOrchestrator,
  LlmOrchestrator,
  RoundRobinOrchestrator,
  TaskOrchestrator,
} from '@switchboard/orchestrators';
import {
  type Agent,
  App,
  type AppOptions,
  agentMeta,
  apiKeys,
  InMemorySessionStore,
  InMemoryTurnQueue,
  llmAgent,
  type TurnQueue,
} from '@switchboard/runtime';
import { createDemoAgents, type DemoAgentOptions } from './agents/index.js';
import type { ServerConfig } from './config.js';
import { DEMO_TASKS } from './demo-tasks.js';
import { createPatternOrchestrator } from './pattern-orchestrators.js';

/** The demo server's version, from its package.json. */
const SERVER_VERSION = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

/** The wired server, before it listens. */
export interface ServerApp {
  app: App;
  orchestrator: Orchestrator;
  /** What the server uses, for the start-up line. */
  description: string;
  /** What an operator should know at start-up (e.g. the server is open). */
  warnings: string[];
}

/** Extra wiring for tests: a fixed clock, other stores, tracing. */
export interface BuildOptions
  extends Partial<Pick<AppOptions, 'sessionStore' | 'memoryStore' | 'eventLog' | 'tracing' | 'logger'>> {
  agents?: DemoAgentOptions;
  storeName?: string;
  /** Where background turns queue (default: in this process). */
  queue?: TurnQueue;
}

function createOrchestrator(config: ServerConfig, agents: readonly Agent[]): Orchestrator {
  const metas = agents.map(agentMeta);
  switch (config.ORCHESTRATOR) {
    case 'round-robin':
      return new RoundRobinOrchestrator({ name: 'round-robin', agents: metas });
    case 'task':
      return new TaskOrchestrator({ name: 'task', agents: metas, tasks: DEMO_TASKS, fallbackAgent: 'help' });
    case 'llm':
      return new LlmOrchestrator({
        name: 'llm',
        agents: metas,
        model: config.OPENAI_MODEL,
        apiKey: config.OPENAI_API_KEY,
        baseURL: config.OPENAI_BASE_URL,
        fallback: { agent: 'help' },
      });
    case 'supervisor':
    case 'plan':
    case 'meta':
      return createPatternOrchestrator(config.ORCHESTRATOR, config, metas);
    default:
      // A message no keyword matches goes to an agent that says what it cannot do, not to a clarifying guess.
      return new KeywordOrchestrator({
        name: 'keyword',
        agents: metas,
        fallbackAgent: metas.some((agent) => agent.name === 'assistant') ? 'assistant' : 'help',
      });
  }
}

/** With an OpenAI key: a general assistant for everything the offline agents do not cover. */
function createAssistantAgent(config: ServerConfig): Agent {
  return llmAgent({
    name: 'assistant',
    description: 'A general assistant (a language model) for questions the other agents do not cover',
    keywords: ['explain', 'why', 'who', 'write', 'summarize', 'summarise'],
    model: config.OPENAI_MODEL,
    apiKey: config.OPENAI_API_KEY,
    baseURL: config.OPENAI_BASE_URL,
    instructions: 'You are a concise, helpful assistant. Answer in a few sentences.',
  });
}

/** Builds the demo app from configuration: agents, orchestrator, stores. */
export function buildServerApp(
  config: ServerConfig,
  { agents: agentOptions, storeName = 'in-memory', queue, ...stores }: BuildOptions = {},
): ServerApp {
  const agents = createDemoAgents({ delayMs: config.DEMO_AGENT_DELAY_MS, ...agentOptions });
  if (config.OPENAI_API_KEY) agents.push(createAssistantAgent(config));
  const orchestrator = createOrchestrator(config, agents);
  const app = new App({
    name: 'switchboard-demo',
    agents,
    sessionIdleTtlSeconds: config.SESSION_IDLE_TTL_SECONDS,
    agentTimeoutMs: config.AGENT_TIMEOUT_MS,
    sessionWaitMs: config.SESSION_WAIT_MS,
    leaseTtlMs: config.LEASE_TTL_MS,
    sweeper: { intervalMs: config.SWEEP_INTERVAL_MS },
    background: { queue: queue ?? new InMemoryTurnQueue({ concurrency: config.BACKGROUND_CONCURRENCY }) },
    closeGraceMs: config.SHUTDOWN_GRACE_MS,
    exposeErrorDetails: config.EXPOSE_ERROR_DETAILS,
    docs: config.DOCS,
    a2a: config.A2A && {
      ...(config.A2A_PUBLIC_URL ? { publicUrl: config.A2A_PUBLIC_URL } : {}),
      trustedHosts: config.A2A_TRUSTED_HOSTS,
    },
    mcp: config.MCP,
    // target_info names the service and its version (src/ and dist/ both sit next to package.json).
    metrics: config.METRICS && { serviceVersion: SERVER_VERSION },
    // With Langfuse tracing on, the console links each turn to its trace.
    console: config.CONSOLE && {
      ...(config.LANGFUSE_PUBLIC_KEY ? { langfuseUrl: config.LANGFUSE_BASE_URL } : {}),
    },
    ...(config.SWITCHBOARD_API_KEYS ? { auth: apiKeys({ keys: config.SWITCHBOARD_API_KEYS }) } : {}),
    rateLimit: {
      requestsPerMinute: config.RATE_LIMIT_PER_MINUTE,
      failedAuthPerMinute: config.FAILED_AUTH_PER_MINUTE,
      publicRequestsPerMinute: config.PUBLIC_REQUESTS_PER_MINUTE,
      trustedProxies: config.TRUSTED_PROXIES,
    },
    ...stores,
    sessionStore:
      stores.sessionStore ??
      new InMemorySessionStore({
        idleTtlSeconds: config.SESSION_IDLE_TTL_SECONDS,
        maxSessions: config.MAX_SESSIONS,
        maxPendingApprovalsPerTenant: config.MAX_PENDING_APPROVALS_PER_TENANT,
      }),
  });
  const keys = Object.keys(config.SWITCHBOARD_API_KEYS ?? {}).length;
  const access = keys > 0 ? `API keys: ${keys}` : 'no API keys (open to anyone who can reach it)';
  const description = `orchestrator ${orchestrator.name}, store ${storeName}, ${access}, agents ${agents.map((agent) => agent.name).join(', ')}`;
  const warnings =
    keys > 0
      ? []
      : [
          'No SWITCHBOARD_API_KEYS set: the server is open; set it before exposing the server beyond this machine.',
        ];
  return { app, orchestrator, description, warnings };
}
