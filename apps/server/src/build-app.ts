import type { Orchestrator } from '@switchboard/core';
import { KeywordOrchestrator, RoundRobinOrchestrator, TaskOrchestrator } from '@switchboard/orchestrators';
import { type Agent, App, type AppOptions, agentMeta } from '@switchboard/runtime';
import { createDemoAgents, type DemoAgentOptions } from './agents/index.js';
import type { ServerConfig } from './config.js';
import { DEMO_TASKS } from './demo-tasks.js';

/** The wired server, before it listens. */
export interface ServerApp {
  app: App;
  orchestrator: Orchestrator;
  /** What the server uses, for the start-up line. */
  description: string;
}

/** Extra wiring for tests: a fixed clock, other stores, tracing. */
export interface BuildOptions extends Partial<Pick<AppOptions, 'sessionStore' | 'memoryStore' | 'tracing'>> {
  agents?: DemoAgentOptions;
  storeName?: string;
}

function createOrchestrator(config: ServerConfig, agents: readonly Agent[]): Orchestrator {
  const metas = agents.map(agentMeta);
  switch (config.ORCHESTRATOR) {
    case 'round-robin':
      return new RoundRobinOrchestrator({ name: 'round-robin', agents: metas });
    case 'task':
      return new TaskOrchestrator({ name: 'task', agents: metas, tasks: DEMO_TASKS, fallbackAgent: 'help' });
    case 'llm':
      throw new Error('ORCHESTRATOR=llm is not available yet');
    default:
      return new KeywordOrchestrator({ name: 'keyword', agents: metas });
  }
}

/** Builds the demo app from configuration: agents, orchestrator, stores. */
export function buildServerApp(
  config: ServerConfig,
  { agents: agentOptions, storeName = 'in-memory', ...stores }: BuildOptions = {},
): ServerApp {
  const agents = createDemoAgents(agentOptions);
  const orchestrator = createOrchestrator(config, agents);
  const app = new App({
    name: 'switchboard-demo',
    agents,
    sessionIdleTtlSeconds: config.SESSION_IDLE_TTL_SECONDS,
    agentTimeoutMs: config.AGENT_TIMEOUT_MS,
    sessionWaitMs: config.SESSION_WAIT_MS,
    leaseTtlMs: config.LEASE_TTL_MS,
    ...stores,
  });
  const description = `orchestrator ${orchestrator.name}, store ${storeName}, agents ${agents.map((agent) => agent.name).join(', ')}`;
  return { app, orchestrator, description };
}
