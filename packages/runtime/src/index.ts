export type { A2aCardFields, A2aOptions, A2aSkillFields } from './a2a/a2a-options.js';
export { type AgentDefinition, agentMeta, defineAgent } from './agents/agent.js';
export type {
  Agent,
  AgentContext,
  AgentReply,
  AgentReplyWithMetadata,
  ApprovalRequirement,
  ApprovalRule,
} from './agents/agent-contract.js';
export {
  type AgentApprovalDecision,
  type AgentApprovalRequest,
  AgentPause,
  type AgentResume,
} from './agents/agent-pause.js';
export { AgentInputError, AgentOutputError } from './agents/agent-schemas.js';
export { type HostsAgents, hostsAgents } from './agents/hosted-agents.js';
export { type LlmAgentOptions, type LlmRunSummary, llmAgent } from './agents/llm-agent.js';
export type { ChatClient, LlmClientOptions } from './agents/llm-client.js';
export {
  type ConversationMemory,
  type ConversationMemoryInput,
  type ConversationMemoryMessages,
  type ConversationMemoryOptions,
  type ConversationMemorySetup,
  type ConversationMemoryStrategy,
  conversationMemory,
} from './agents/llm-memory.js';
export {
  type LlmTool,
  type LlmToolApprovalRule,
  type LlmToolContext,
  type LlmToolDefinition,
  llmTool,
} from './agents/llm-tool.js';
export { ToolTimeoutError } from './agents/llm-tool-attempts.js';
export type { LlmToolFilter, LlmToolFilterContext, LlmToolResult } from './agents/llm-tool-filter.js';
export { isLlmToolSource, type LlmToolSource } from './agents/llm-tool-source.js';
export {
  type InnerStep,
  type InnerStepCall,
  NestingDepthError,
  type OrchestratorAgentOptions,
  orchestratorAgent,
} from './agents/orchestrator-agent.js';
export {
  type PublishedGraph,
  PublishedGraphSchema,
  type PublishesGraph,
  publishesGraph,
} from './agents/published-graph.js';
export { RemoteAgentError, type RemoteAgentOptions, remoteAgent } from './agents/remote-agent.js';
export {
  App,
  type AppOptions,
  type ChatInput,
  type OrchestratorInput,
  type ServerHandle,
  type Shutdownable,
  type StartOptions,
} from './app.js';
export {
  ApprovalForbiddenError,
  type ApprovalRefusal,
  InsufficientScopeError,
} from './backend/access-errors.js';
export type { ApprovalCaller, ApproverRule, ApproversPolicy } from './backend/approvers.js';
export {
  type AuthOptions,
  DEFAULT_TENANT_SCOPES,
  DEFAULT_USER_SCOPES,
  KEY_SCOPES,
  type KeyScope,
  type Principal,
} from './backend/principal.js';
export { BackgroundUnavailableError, QueueFullError } from './background/background-errors.js';
export {
  type BackgroundOptions,
  BackgroundTurns,
  type CallbackDelivery,
  type OwnerOptions,
  type QueuedTurnReceipt,
  type TurnProgress,
  type TurnStatusView,
} from './background/background-turns.js';
export { InMemoryTurnQueue, type InMemoryTurnQueueOptions } from './background/in-memory-turn-queue.js';
export type { QueuedTurn, QueueOutcome, QueueWork, TurnQueue } from './background/turn-queue.js';
export {
  type BudgetCounters,
  type ChargeResult,
  type CounterEntry,
  InMemoryBudgetCounters,
  type Spend,
  type SpendLimits,
} from './budgets/budget-counters.js';
export { type BudgetExceededDetails, BudgetExceededError } from './budgets/budget-errors.js';
export type {
  BudgetLimits,
  BudgetOptions,
  BudgetPeriod,
  BudgetScope,
  LimitName,
  ModelPrice,
} from './budgets/budget-options.js';
export type { PeriodUsage, UsageAmounts, UsageReport } from './budgets/budgets.js';
export {
  chargeModelCall,
  type ModelCallCharge,
  type ModelCallTicket,
} from './budgets/turn-budget.js';
export * from './callbacks/index.js';
export {
  ConfigAdmin,
  type ConfigDiff,
  type ConfigListing,
  type ConfigTarget,
  type ConfigWriteOptions,
} from './config/config-admin.js';
export type { ConfigDifference } from './config/config-diff.js';
export { ConfigVersionConflictError } from './config/config-errors.js';
export {
  CONFIG_ITEM_SCHEMAS,
  CONFIG_ITEM_TYPES,
  type ConfigItemType,
  type ConfigItemValues,
  type KeywordsItem,
  KeywordsItemSchema,
  MAX_COMMENT_LENGTH,
  MAX_ITEM_BYTES,
  MAX_ITEMS_PER_SCOPE,
  MAX_VERSIONS_KEPT,
  type PatternItem,
  PatternItemSchema,
  type ProfileItem,
  ProfileItemSchema,
  type StepRulesItem,
  StepRulesItemSchema,
  type TaskTypeItem,
  TaskTypeItemSchema,
} from './config/config-items.js';
export {
  type ConfigChange,
  type ConfigEntry,
  type ConfigRefusal,
  type ConfigScope,
  type ConfigSnapshot,
  type ConfigStore,
  type ConfigStoreLimits,
  type ConfigWriteResult,
  configScope,
} from './config/config-store.js';
export { InMemoryConfigStore } from './config/in-memory-config-store.js';
export * from './deprecated.js';
export type { TurnEvent, TurnEventBody, TurnEventType } from './engine/events.js';
export type {
  ApprovalResolution,
  CancelRequest,
  ConcurrencyPolicy,
  DirectCall,
  TurnOptions,
  TurnRequest,
  TurnResult,
} from './engine/turn-engine.js';
export {
  DEFAULT_SWEEP_AFTER_MS,
  DEFAULT_SWEEP_INTERVAL_MS,
  MAX_TURNS_PER_SWEEP,
  type SweeperOptions,
  TurnSweeper,
} from './engine/turn-sweeper.js';
export * from './guardrails/index.js';
export type { ErrorCallback, Logger, LogLevel, LogMethod } from './logging/logger.js';
export { METER_NAME } from './metrics/engine-metrics.js';
export type { MetricsOptions, OtlpMetricsOptions } from './metrics/prometheus-metrics.js';
export * from './retrieval/index.js';
export type { RateLimitOptions } from './server/access.js';
export {
  type ApiKeyOwner,
  type ApiKeysOptions,
  apiKeys,
  bearerToken,
  DEFAULT_PUBLIC_ROUTES,
} from './server/auth.js';
export type { ConsoleOptions } from './server/console-ui.js';
export type { CorsOptions } from './server/cors.js';
export type { DocsOptions } from './server/docs-ui.js';
export type { McpOptions } from './server/mcp-mount.js';
export type { ServerLimits } from './server/routes.js';
export * from './stores/index.js';
export {
  type ObserveMethodDecorator,
  type ObserveOptions,
  observe,
} from './tracing/observe.js';
export type { ObservationType } from './tracing/span-attributes.js';
