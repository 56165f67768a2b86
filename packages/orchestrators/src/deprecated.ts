/**
 * Names `@switchboard/orchestrators` keeps for one minor version after they
 * moved or were renamed (see CHANGELOG.md). Each says where its home is now;
 * this file is emptied in the next minor.
 * @module
 */
import type { AgentLike } from '@switchboard/core';
import type {
  ChatClient as RuntimeChatClient,
  LlmClientOptions as RuntimeLlmClientOptions,
} from '@switchboard/runtime';
import { LlmOrchestrator, type LlmOrchestratorOptions } from './llm-orchestrator.js';

/**
 * @deprecated Renamed {@link LlmOrchestrator} (one spelling per acronym: `Llm…`); this alias is removed in the
 * next minor.
 */
export const LLMOrchestrator = LlmOrchestrator;
/** @deprecated Renamed {@link LlmOrchestrator}; this alias is removed in the next minor. */
export type LLMOrchestrator = LlmOrchestrator;
/** @deprecated Renamed {@link LlmOrchestratorOptions}; this alias is removed in the next minor. */
export type LLMOrchestratorOptions = LlmOrchestratorOptions;

/**
 * @deprecated Import `ChatClient` from `@switchboard/runtime`, its one home; `@switchboard/orchestrators` stops
 * exporting it in the next minor.
 */
export type ChatClient = RuntimeChatClient;
/**
 * @deprecated Import `LlmClientOptions` from `@switchboard/runtime`, its one home; `@switchboard/orchestrators`
 * stops exporting it in the next minor.
 */
export type LlmClientOptions = RuntimeLlmClientOptions;
/**
 * @deprecated A strategy takes an `AgentLike` from `@switchboard/core` (the agent, or its metadata), as every
 * orchestrator does, and keeps its whole metadata; this alias is removed in the next minor.
 */
export type StrategyAgent = AgentLike;
