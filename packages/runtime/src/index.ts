export { type Agent, type AgentContext, type AgentDefinition, type AgentReply, type AgentReplyWithMetadata, agentMeta, defineAgent } from './agents/agent.js';
export {
  App,
  type AppOptions,
  type ChatInput,
  type OrchestratorInput,
  type ServerHandle,
  type Shutdownable,
  type StartOptions,
} from './app.js';
export type { TurnEvent, TurnEventType } from './engine/events.js';
export type { TurnOptions, TurnRequest, TurnResult } from './engine/turn-engine.js';
export type { ServerLimits } from './server/routes.js';
export * from './stores/index.js';
export { TRACER_NAME } from './tracing/spans.js';
