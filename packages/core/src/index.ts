export { RequestContext, type RequestContextInit } from './context.js';
export {
  type Conversation,
  currentUserMessage,
  lastMessage,
  latestToolResults,
  turnMessages,
} from './conversation.js';
export {
  AgentError,
  AgentTimeoutError,
  ConfigurationError,
  ContextMissingError,
  CorruptRecordError,
  describeError,
  type ErrorKind,
  InvalidDecisionError,
  MaxHopsExceededError,
  NotFoundError,
  OrchestratorError,
  SessionBusyError,
  StoreUnavailableError,
  SwitchboardError,
  type SwitchboardErrorOptions,
  SystemError,
  UnknownAgentError,
  UserError,
  ValidationError,
} from './errors.js';
export { createId, createSecretId } from './ids.js';
export type { Memory, MemoryResult, MemoryScope, SetContentOptions } from './memory.js';
export {
  type AgentMeta,
  AgentMetaSchema,
  type AssistantMessage,
  AssistantMessageSchema,
  type Decision,
  type ErrorMessage,
  isErrorMessage,
  isRouteToUser,
  type MessageItem,
  MessageItemSchema,
  ROUTE_TO_USER,
  routeToUser,
  type ToolCall,
  type ToolCallOptions,
  ToolCallSchema,
  type ToolMessage,
  ToolMessageSchema,
  toolCall,
  type UserMessage,
  UserMessageSchema,
} from './messages.js';
export {
  AbstractOrchestrator,
  type Orchestrator,
  type OrchestratorOptions,
  validateDecision,
} from './orchestrator.js';
