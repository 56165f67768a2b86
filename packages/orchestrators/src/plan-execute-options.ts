/**
 * What a `PlanExecuteOrchestrator` is made with.
 *
 * @module
 */
import type { AgentLike } from '@switchboard/core';
import type { LlmClientOptions } from '@switchboard/runtime';

/** Options of {@link PlanExecuteOrchestrator}. */
export interface PlanExecuteOrchestratorOptions extends LlmClientOptions {
  /** Default `plan-execute`. */
  name?: string;
  description?: string;
  /** The agents it routes to: the agents themselves (`defineAgent`, `llmAgent`, …) or their metadata (`app.agentMetas`). */
  agents: readonly AgentLike[];
  /** The planning model, e.g. `gpt-4o-mini`. It must support JSON-schema structured output. */
  model: string;
  /** New plans per turn, after a failed step or a review that revised the plan. Default 2; a strategy profile's `maxReplans` wins. */
  maxReplans?: number;
  /**
   * After a round whose steps all succeeded, while steps remain, the model
   * reviews the results and may replace the remaining steps (a re-plan,
   * counted against `maxReplans`; once they are used up, the plan runs as it
   * stands). One model call per such round. Default true; false re-plans
   * only when a step fails.
   */
  reviewResults?: boolean;
  /** Replaces the role description of the planning prompts. */
  instructions?: string;
  /** How many earlier messages the model sees (the current turn is always whole). Default 12. */
  historyWindow?: number;
  /** Further attempts after an invalid answer, each with feedback. Default 1. */
  maxRetries?: number;
  temperature?: number;
}
