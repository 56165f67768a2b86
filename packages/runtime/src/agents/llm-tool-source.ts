import { AgentError } from '@switchboard/core';
import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import type { LlmTool } from './llm-tool.js';

/**
 * Tools an {@link llmAgent} learns only when it runs, such as the tools of an
 * MCP server (`mcpTools` in `@switchboard/runtime/mcp`). The agent asks for
 * them at the start of every call — a source caches what it listed, so that
 * asking is cheap — and runs them like its own tools: spans, timeouts,
 * retries, approvals and its `toolFilter` apply to them alike.
 *
 * @example
 * ```ts
 * const source: LlmToolSource = {
 *   name: 'clock',
 *   listTools: async () => [now],
 *   close: async () => {},
 * };
 * llmAgent({ name: 'helper', description: 'Tells the time', model, instructions, tools: [source] });
 * ```
 */
export interface LlmToolSource {
  /** Names the source in error messages. */
  readonly name: string;
  /** The tools to offer for one agent call; a throw fails that call. */
  listTools(signal: AbortSignal): Promise<readonly LlmTool[]>;
  /** Releases what the source holds (connections, processes); called by `app.close()`. */
  close?(): Promise<void>;
}

/** True for a tool source rather than a tool defined with `llmTool`. */
export function isLlmToolSource(value: unknown): value is LlmToolSource {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { listTools?: unknown }).listTools === 'function' &&
    (value as { definition?: unknown }).definition === undefined
  );
}

/** The tools one agent call works with, computed from its own tools and its sources' current lists. */
export interface ToolSet {
  tools: readonly LlmTool[];
  byName: ReadonlyMap<string, LlmTool>;
  /** The definitions sent when no filter narrows them; undefined without tools. */
  definitions: ChatCompletionFunctionTool[] | undefined;
  needsApproval: boolean;
}

/** Builds a tool set; two tools of one name are an error naming both. */
export function toolSet(tools: readonly LlmTool[], owner = 'the agent'): ToolSet {
  const byName = new Map<string, LlmTool>();
  for (const tool of tools) {
    if (byName.has(tool.name)) {
      throw new AgentError({
        agent: owner,
        message: `two of its tools are named '${tool.name}': give an MCP tool source a prefix`,
      });
    }
    byName.set(tool.name, tool);
  }
  return {
    tools,
    byName,
    definitions: tools.length > 0 ? tools.map((tool) => tool.definition) : undefined,
    needsApproval: tools.some((tool) => tool.requiresApproval),
  };
}

/**
 * Resolves an agent's tools for each call: its own, fixed, tools plus what
 * its sources list now. The set is rebuilt only when a source's list
 * changed (sources return the same array while nothing changed).
 */
export function toolResolver(
  fixed: readonly LlmTool[],
  sources: readonly LlmToolSource[],
  owner: string,
): (signal: AbortSignal) => ToolSet | Promise<ToolSet> {
  const fixedSet = toolSet(fixed, owner);
  if (sources.length === 0) return () => fixedSet;
  let last: { lists: readonly (readonly LlmTool[])[]; set: ToolSet } | undefined;
  return async (signal) => {
    const lists = await Promise.all(sources.map((source) => source.listTools(signal)));
    if (last && lists.every((list, index) => list === last?.lists[index])) return last.set;
    const set = toolSet([...fixed, ...lists.flat()], owner);
    last = { lists, set };
    return set;
  };
}
