import { AgentError } from '@switchboard/core';
import type { AgentContext } from './agent.js';
import type { LlmTool } from './llm-tool.js';

/** One tool call the model made, as it was answered. */
export interface LlmToolResult {
  /** The tool the model called. */
  name: string;
  /** The id of the model's tool call. */
  toolCallId: string;
  /** What the model was sent as the call's result. */
  content: string;
  /**
   * False when the tool did not give a result: it failed or timed out, its
   * arguments were invalid, it was not offered, or a person rejected it.
   * `content` is then the error the model saw.
   */
  ok: boolean;
}

/** What an {@link LlmToolFilter} knows besides the agent's tool names. */
export interface LlmToolFilterContext {
  /** The agent call's context: its conversation (and `limits`), request (and memory), signal. */
  agent: AgentContext;
  /** The name of the `llmAgent` whose tools are filtered. */
  agentName: string;
  /** Model calls this agent call has made so far: 0 before its first. */
  modelCalls: number;
  /**
   * The tool calls answered since the previous model call, in call order:
   * empty before the first model call, and when a call that paused for
   * approval continues (its tools are then run against the set computed again).
   */
  results: readonly LlmToolResult[];
}

/**
 * Chooses, before each model call of an `llmAgent`, which of its tools the
 * model is offered: it receives every tool name and returns the ones to
 * offer. Names that are not the agent's tools are ignored — a filter only
 * narrows. A tool call outside the returned set is refused as a tool error
 * the model sees, and never runs. A throw fails the agent call.
 *
 * For steps — tools that must be called in order, or only once another was
 * used, across turns — see `toolStepRules` in `@switchboard/orchestrators`.
 *
 * @example
 * ```ts
 * // No refunds while the turn runs under the conservative profile.
 * const toolFilter: LlmToolFilter = (tools, { agent }) =>
 *   agent.conversation.limits?.profile === 'conservative' ? tools.filter((name) => name !== 'refund') : tools;
 * ```
 */
export type LlmToolFilter = (
  tools: string[],
  context: LlmToolFilterContext,
) => readonly string[] | Promise<readonly string[]>;

/**
 * The tools to offer for one model call: those the filter returns, in the
 * agent's order.
 *
 * @example
 * ```ts
 * const offered = await offeredTools(filter, tools, { agent: context, agentName, modelCalls: 0, results: [] });
 * ```
 */
export async function offeredTools(
  filter: LlmToolFilter,
  tools: readonly LlmTool[],
  context: LlmToolFilterContext,
): Promise<LlmTool[]> {
  const chosen: unknown = await filter(
    tools.map((tool) => tool.name),
    context,
  );
  if (!Array.isArray(chosen)) {
    throw new AgentError({
      agent: context.agentName,
      message: `its toolFilter returned ${chosen === null ? 'null' : typeof chosen}, not an array of tool names`,
    });
  }
  const offered = new Set(chosen);
  return tools.filter((tool) => offered.has(tool.name));
}
