/**
 * `@switchboard/runtime/langgraph`: LangGraph.js graphs hosted as
 * Switchboard agents ({@link langGraphAgent}) and a LangGraph checkpointer
 * over Switchboard's stores ({@link SwitchboardCheckpointSaver}, in memory
 * or on plain Redis). Importing it needs `@langchain/langgraph`,
 * `@langchain/langgraph-checkpoint` and `@langchain/core` installed
 * (optional peer dependencies); `@switchboard/runtime` itself never loads them.
 *
 * @module
 */

export type {
  CheckpointBackend,
  CheckpointPut,
  LoadedCheckpoint,
  StoredCheckpoint,
  StoredValue,
  StoredWrite,
  ThreadRef,
} from './langgraph/checkpoint-backend.js';
export {
  SwitchboardCheckpointSaver,
  type SwitchboardCheckpointSaverOptions,
} from './langgraph/checkpoint-saver.js';
export {
  type MemoryCheckpointBackendOptions,
  memoryCheckpointBackend,
} from './langgraph/memory-checkpoint-backend.js';
export {
  type RedisCheckpointBackendOptions,
  redisCheckpointBackend,
} from './langgraph/redis-checkpoint-backend.js';
