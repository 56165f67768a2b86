import { KeywordOrchestrator } from '@switchboard/orchestrators';
import { App, type AppOptions, defineAgent } from '@switchboard/runtime';
import {
  langGraphAgent,
  memoryCheckpointBackend,
  redisCheckpointBackend,
  SwitchboardCheckpointSaver,
} from '@switchboard/runtime/langgraph';
import { createRedisStores } from '@switchboard/runtime/redis';
import { Redis } from 'ioredis';
import { returnsGraph } from './returns-graph.js';

/** A native agent beside the graph: opening hours. */
export const hoursAgent = defineAgent({
  name: 'hours',
  description: 'Says when the shop is open',
  keywords: ['open', 'hours', 'closed'],
  run: () => 'We are open Monday to Saturday, 9:00 to 18:00.',
});

/** Options of {@link buildApp}. */
export interface ReturnsAppOptions
  extends Omit<AppOptions, 'name' | 'agents' | 'sessionStore' | 'memoryStore'> {
  /** Keep sessions and the graph's checkpoints in Redis, shared by every replica (default: in memory). */
  redis?: { url: string; keyPrefix?: string };
}

/**
 * Builds the returns desk: the keyword router sends refunds to the LangGraph
 * graph and opening hours to a native agent. Sessions and checkpoints live
 * in memory, or in Redis with `redis`.
 */
export function buildApp({ redis, ...options }: ReturnsAppOptions = {}) {
  const keyPrefix = redis?.keyPrefix ?? 'returns-desk:';
  const connection = redis ? new Redis(redis.url, { lazyConnect: true }) : undefined;
  const checkpointer = new SwitchboardCheckpointSaver({
    backend: connection ? redisCheckpointBackend(connection, { keyPrefix }) : memoryCheckpointBackend(),
  });
  const returns = langGraphAgent({
    name: 'returns',
    description: 'Refunds an order; refunds over 100 wait for a person',
    keywords: ['refund', 'money back', 'return'],
    graph: returnsGraph(checkpointer),
  });
  const agents = [returns, hoursAgent];
  const app = new App({
    name: 'returns-desk',
    agents,
    ...(redis ? createRedisStores(redis.url, { keyPrefix }) : {}),
    ...options,
  });
  const orchestrator = new KeywordOrchestrator({ agents, fallbackAgent: 'hours' });
  /** Quits the checkpointer's Redis connection, after the app has closed. */
  const disconnect = async () => {
    await connection?.quit();
  };
  return { app, orchestrator, disconnect };
}
