export { AgentBannedError, type BreakerOptions, BreakerOrchestrator, withBreaker } from './breaker.js';
export { MAX_BANNED_AGENTS, MAX_TRACKED_AGENTS } from './breaker-state.js';
export { MAX_SAMPLES_PER_AGENT, MAX_STATS_AGENTS } from './breaker-stats.js';
export { type Capability, type ClarifyingQuestionOptions, clarifyingQuestion } from './clarification.js';
export type { ConsensusJudgeOptions } from './consensus-judge.js';
export {
  type ConsensusAggregator,
  ConsensusOrchestrator,
  type ConsensusOrchestratorOptions,
  type ConsensusVerdict,
} from './consensus-orchestrator.js';
export type { ConsensusAnswer, VoteTally } from './consensus-votes.js';
export { type CriticOptions, CriticOrchestrator, withCritic } from './critic.js';
export { type HallucinationCheckOptions, lexicalHallucinationRisk } from './critic-grounding.js';
export type { CriticJudgeOptions, CriticReview, CriticVerdict } from './critic-judge.js';
export type { Critic, CriticFunction } from './critic-review.js';
export { type CriticFeedback, isCriticFeedback } from './critic-state.js';
export type { CriticVerdictKind } from './critic-verdict.js';
export * from './deprecated.js';
export { type GraphBuilder, type StateGraphOptions, stateGraph } from './graph-builder.js';
export {
  GraphCompileError,
  GraphNodeError,
  GraphOutputError,
  GraphStateError,
  GraphStepLimitError,
} from './graph-errors.js';
export { GraphOrchestrator } from './graph-orchestrator.js';
export {
  type AgentNodeOptions,
  END,
  type FunctionNodeOptions,
  type GraphNodeContext,
  type GraphNodeFailure,
  type GraphNodeKind,
  type GraphRoute,
  type GraphState,
  type GraphView,
  type InputNodeOptions,
  type NodeFunction,
  type NodeOptions,
  type OrchestratorNodeOptions,
  type Reducer,
  type ReducerSpec,
  type ReplyMapping,
} from './graph-types.js';
export type { MatchScore } from './keyword-matcher.js';
export { KeywordOrchestrator, type KeywordOrchestratorOptions } from './keyword-orchestrator.js';
export { LlmOrchestrator, type LlmOrchestratorOptions, type LlmRouterFallback } from './llm-orchestrator.js';
export { type LlmTaskClassifierOptions, llmTaskClassifier } from './llm-task-classifier.js';
export { GENERAL_TASK, type TaskType, taskFramingOf } from './meta-route-view.js';
export {
  type MetaRouteChoice,
  type MetaRouteChooser,
  type MetaRouteInput,
  MetaRouter,
  type MetaRouterOptions,
  type MetaRouterPattern,
} from './meta-router.js';
export { type PerceptionAgentOptions, PerceptionBlockedError, perceptionAgent } from './perception-agent.js';
export {
  MAX_SUB_GOALS,
  type PerceptionSnapshot,
  PerceptionSnapshotSchema,
  perceptionOf,
} from './perception-schema.js';
export {
  PlanExecuteOrchestrator,
  type PlanExecuteOrchestratorOptions,
} from './plan-execute-orchestrator.js';
export { RoundRobinOrchestrator, type RoundRobinOrchestratorOptions } from './round-robin-orchestrator.js';
export { RoutingOrchestrator } from './routing-orchestrator.js';
export { SequentialOrchestrator, type SequentialOrchestratorOptions } from './sequential-orchestrator.js';
export { StepRefusedError } from './step-refused-error.js';
export { type StepRulesOptions, StepRulesOrchestrator, withSteps } from './step-rules.js';
export type { StepCondition, StepPredicate, StepRule, StepRuleState } from './step-rules-config.js';
export type { BestChoice, CandidateScore, StrategyJudge, StrategyScorer } from './strategy-choice.js';
export type { StrategyCandidate, StrategyJudgeOptions } from './strategy-judge.js';
export {
  bestOf,
  DEFAULT_STRATEGY_MODES,
  fallbackChain,
  type StrategyMode,
  type StrategyOptions,
  StrategyOrchestrator,
  type StrategyUntil,
} from './strategy-orchestrator.js';
export { SupervisorOrchestrator, type SupervisorOrchestratorOptions } from './supervisor-orchestrator.js';
export type { SubGoal } from './supervisor-schema.js';
export type { TaskClassifier, TaskDescription } from './task-classifier.js';
export { type TaskDefinition, TaskOrchestrator, type TaskOrchestratorOptions } from './task-orchestrator.js';
export { type ToolStepRulesOptions, toolStepRules } from './tool-step-rules.js';
