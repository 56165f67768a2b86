import { ConfigurationError } from '@switchboard/core';
import type { AgentContext } from './agent.js';
import type { LlmClientOptions } from './llm-client.js';
import type { ConversationMemoryOptions, ConversationMemoryStrategy } from './llm-memory.js';
import type { LlmTool } from './llm-tool.js';
import type { LlmToolFilter } from './llm-tool-filter.js';
import { isLlmToolSource, type LlmToolSource } from './llm-tool-source.js';

/** Options of {@link llmAgent}. */
export interface LlmAgentOptions extends LlmClientOptions {
  name: string;
  /** What the agent does; orchestrators read it to choose agents. */
  description: string;
  /** The model name, e.g. `gpt-4o-mini`. */
  model: string;
  /** The system prompt, or a function computing it for each call. */
  instructions: string | ((context: AgentContext) => string | Promise<string>);
  /**
   * Tools the model may call, defined with {@link llmTool}, and sources of
   * tools listed when the agent runs ({@link LlmToolSource}, such as
   * `mcpTools` from `@switchboard/runtime/mcp`).
   */
  tools?: readonly (LlmTool | LlmToolSource)[];
  /**
   * Narrows the tools the model is offered, before each model call (see
   * {@link LlmToolFilter}); a call to a tool it left out is refused as a
   * tool error the model sees, and never runs. Default: every tool, always.
   * `toolStepRules` (`@switchboard/orchestrators`) makes one from step rules.
   */
  toolFilter?: LlmToolFilter;
  /**
   * The most model calls per agent call (tool-call rounds included). Default
   * 10. A model still asking for tools at the limit does not fail the call:
   * the agent answers with what it has — its text so far, else the tool
   * results so far — and marks the reply `metadata.partial: true`.
   */
  maxIterations?: number;
  temperature?: number;
  /** The most tokens each model call may generate, sent as `max_completion_tokens`. Default: the model's. */
  maxTokens?: number;
  /**
   * What the model sees of the conversation besides the task: `'window'`,
   * `'summary'` or `'hybrid'`, or the options of {@link conversationMemory}
   * (window size, summary size, token budget, summary model). Default: none,
   * as before — only the instructions and the task, so that no call pays for
   * history (or summaries) it did not ask for.
   */
  memory?: ConversationMemoryStrategy | ConversationMemoryOptions;
  keywords?: string[];
  capabilities?: string[];
  /** Stream text deltas (forwarded as `agent-delta` events). Default true. */
  stream?: boolean;
  /** Overrides the app's per-agent timeout. */
  timeoutMs?: number;
}

/** Fails construction with an actionable message on options `llmAgent` cannot run with. */
export function checkOptions({
  name,
  model,
  instructions,
  tools,
  maxIterations,
  maxTokens,
  toolFilter,
}: Required<Pick<LlmAgentOptions, 'name' | 'model' | 'instructions' | 'tools' | 'maxIterations'>> &
  Pick<LlmAgentOptions, 'maxTokens' | 'toolFilter'>) {
  const owner = `llmAgent '${String(name)}'`;
  if (typeof model !== 'string' || model === '')
    throw new ConfigurationError({ message: `${owner} needs a model name` });
  if (typeof instructions !== 'string' && typeof instructions !== 'function') {
    throw new ConfigurationError({ message: `${owner} needs instructions (a string or a function)` });
  }
  if (!Number.isInteger(maxIterations) || maxIterations < 1) {
    throw new ConfigurationError({
      message: `${owner}: maxIterations must be a positive integer, got ${maxIterations}`,
    });
  }
  if (maxTokens !== undefined && (!Number.isInteger(maxTokens) || maxTokens < 1)) {
    throw new ConfigurationError({
      message: `${owner}: maxTokens must be a positive integer, got ${maxTokens}`,
    });
  }
  if (toolFilter !== undefined && typeof toolFilter !== 'function')
    throw new ConfigurationError({ message: `${owner}: toolFilter must be a function` });
  const seen = new Set<string>();
  for (const tool of tools) {
    if (isLlmToolSource(tool)) continue;
    if (typeof tool?.definition !== 'object')
      throw new ConfigurationError({ message: `${owner}: define its tools with llmTool()` });
    if (seen.has(tool.name))
      throw new ConfigurationError({ message: `${owner} has two tools named '${tool.name}'` });
    seen.add(tool.name);
  }
}
