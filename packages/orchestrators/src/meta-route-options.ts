/**
 * What a `MetaRouter` is made with, and what a `choose` function of its
 * own is given and returns.
 *
 * @module
 */
import type { AgentLike, Conversation } from '@switchboard/core';
import type { LlmClientOptions } from '@switchboard/runtime';
import type { MetaRouterPattern } from './meta-route-setup.js';
import type { TaskType } from './meta-route-view.js';

/** What a {@link MetaRouteChooser} is given. */
export interface MetaRouteInput {
  conversation: Conversation;
  /** The text of the turn's user message. */
  message: string;
  taskTypes: readonly TaskType[];
  /** The patterns by name, with the agents each may call. */
  patterns: readonly { name: string; whenToUse?: string; agents: readonly string[] }[];
}

/** A chooser's pick. `pattern` may be left out: the default pattern when the task type allows it, else its first. */
export interface MetaRouteChoice {
  taskType: string;
  pattern?: string;
  rationale?: string;
  confidence?: number;
}

/** Picks the task type and pattern without a model (rules, a classifier of your own). */
export type MetaRouteChooser = (input: MetaRouteInput) => MetaRouteChoice | Promise<MetaRouteChoice>;

/** Options of {@link MetaRouter}. */
export interface MetaRouterOptions extends LlmClientOptions {
  /** Default `meta`. */
  name?: string;
  description?: string;
  /** The agents it routes to: the agents themselves (`defineAgent`, `llmAgent`, …) or their metadata (`app.agentMetas`). */
  agents: readonly AgentLike[];
  /** Without task types, every turn is the `general` task handled by the default pattern. */
  taskTypes?: readonly TaskType[];
  patterns: Readonly<Record<string, MetaRouterPattern>>;
  /** The pattern of the `general` task and of every fallback. Default: the first pattern. */
  defaultPattern?: string;
  /** Chooses with a function instead of a model. */
  choose?: MetaRouteChooser;
  /** The model that chooses (structured output), when there is no `choose`. */
  model?: string;
  /** Replaces the opening of the task-type prompt. */
  instructions?: string;
  /** How many recent messages the model sees (the current turn is always whole). Default 12. */
  historyWindow?: number;
  /** Further attempts after an invalid answer, each with feedback. Default 1. */
  maxRetries?: number;
  temperature?: number;
}
