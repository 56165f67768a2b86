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
  type HostedLangGraph,
  type LangGraphAgentOptions,
  langGraphAgent,
} from './langgraph/langgraph-agent.js';
export {
  defaultInterruptKind,
  type LangGraphApprovalAnswer,
  type LangGraphInterrupt,
  type LangGraphInterruptKind,
  MAX_INTERRUPT_ACTION_CHARS,
  MAX_INTERRUPT_INPUT_CHARS,
  MAX_INTERRUPT_MESSAGE_CHARS,
} from './langgraph/langgraph-interrupts.js';
export {
  type MemoryCheckpointBackendOptions,
  memoryCheckpointBackend,
} from './langgraph/memory-checkpoint-backend.js';
export {
  type RedisCheckpointBackendOptions,
  redisCheckpointBackend,
} from './langgraph/redis-checkpoint-backend.js';
