import { ConfigurationError } from '@switchboard/core';
import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import { z } from 'zod';
import type { AgentContext, ApprovalRequirement } from './agent-contract.js';

/** What a tool's `execute` receives besides its arguments. */
export interface LlmToolContext {
  /** Aborted when the agent is cancelled or times out; pass it on to I/O. */
  signal: AbortSignal;
  /** The id of the model's tool call being answered. */
  toolCallId: string;
  /** The context of the agent run that called the tool. */
  agent: AgentContext;
}

/** The definition accepted by {@link llmTool}. */
export interface LlmToolDefinition<Parameters extends z.ZodObject> {
  /** The function name the model calls: letters, digits, `_` and `-`, at most 64. */
  name: string;
  /** What the tool does and when to use it; the model reads this. */
  description: string;
  /** The arguments, as a zod object; describe fields with `.describe()` for the model. */
  parameters: Parameters;
  /**
   * Runs the tool with validated arguments. Return text, or a value that is
   * sent to the model as JSON. A throw is reported to the model as the tool's
   * result, so it can correct itself.
   */
  execute(args: z.output<Parameters>, context: LlmToolContext): unknown;
  /**
   * Run this tool only once a person approves it: always (`true`), or when
   * the rule says so for these arguments. The agent's call then pauses (the
   * turn waits in `awaiting_approval`, one approval per tool call) and, once
   * decided, continues where it stopped: approved tools run, a rejected one
   * is reported to the model as rejected.
   */
  requiresApproval?: boolean | LlmToolApprovalRule<z.output<Parameters>>;
  /**
   * Each attempt's deadline in milliseconds. Past it, the signal `execute`
   * received is aborted (with a `ToolTimeoutError` as its reason) and
   * the model is told the tool timed out; a tool that ignores its signal is
   * no longer waited for. A timeout is retryable (see `retries`). Default:
   * none — the agent's own timeout bounds its tools.
   */
  timeoutMs?: number;
  /**
   * Further attempts after a retryable failure — a timeout, or an error
   * with `retryable: true` (as Switchboard's errors carry it) — with
   * exponential backoff and full jitter, each attempt recorded on the tool's
   * span. Default: the turn's strategy profile's `agentRetries`
   * (`conversation.limits`), else 0. The waits follow the profile's
   * `retryBaseDelayMs` and `retryMaxDelayMs` (without a profile, the
   * `fallback` profile's).
   */
  retries?: number;
}

/** Decides whether one call of a tool needs approval, from its validated arguments. */
export type LlmToolApprovalRule<Args> = (
  args: Args,
  context: LlmToolContext,
) => boolean | ApprovalRequirement | Promise<boolean | ApprovalRequirement>;

/** A tool an {@link llmAgent} can call, with its OpenAI definition computed once. */
export interface LlmTool {
  readonly name: string;
  readonly description: string;
  /** Validates the model's arguments. */
  readonly parameters: z.ZodType;
  /** The OpenAI function-tool definition sent with every request. */
  readonly definition: ChatCompletionFunctionTool;
  execute(args: unknown, context: LlmToolContext): unknown;
  /** See {@link LlmToolDefinition.requiresApproval}. */
  readonly requiresApproval?: boolean | LlmToolApprovalRule<unknown>;
  /** See {@link LlmToolDefinition.timeoutMs}. */
  readonly timeoutMs?: number;
  /** See {@link LlmToolDefinition.retries}. */
  readonly retries?: number;
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Defines a tool for {@link llmAgent}. The zod parameter schema becomes the
 * OpenAI function's JSON schema once, here, and validates every call's
 * arguments before `execute` runs; invalid arguments go back to the model as
 * an error it can fix.
 *
 * @example
 * ```ts
 * const add = llmTool({
 *   name: 'add',
 *   description: 'Adds two numbers',
 *   parameters: z.object({ a: z.number(), b: z.number() }),
 *   execute: ({ a, b }) => String(a + b),
 * });
 *
 * // Gives up on an attempt after 5 s; a timeout or a `retryable` error is tried twice more.
 * const stock = llmTool({
 *   name: 'stock',
 *   description: 'Stock level of a product',
 *   parameters: z.object({ sku: z.string() }),
 *   timeoutMs: 5_000,
 *   retries: 2,
 *   execute: async ({ sku }, { signal }) => (await fetch(`${inventoryUrl}/${sku}`, { signal })).json(),
 * });
 * ```
 */
export function llmTool<Parameters extends z.ZodObject>(definition: LlmToolDefinition<Parameters>): LlmTool {
  const { name, description, parameters, execute, requiresApproval, timeoutMs, retries } = definition;
  if (typeof name !== 'string' || !TOOL_NAME.test(name)) {
    throw new ConfigurationError({
      message: `Tool name '${String(name)}' is invalid: use 1–64 letters, digits, _ or -`,
    });
  }
  if (!(parameters instanceof z.ZodObject)) {
    throw new ConfigurationError({ message: `Tool '${name}' needs parameters defined with z.object(…)` });
  }
  if (typeof execute !== 'function') {
    throw new ConfigurationError({ message: `Tool '${name}' needs an execute(args, context) function` });
  }
  if (
    requiresApproval !== undefined &&
    typeof requiresApproval !== 'boolean' &&
    typeof requiresApproval !== 'function'
  ) {
    throw new ConfigurationError({
      message: `Tool '${name}': requiresApproval must be a boolean or a function`,
    });
  }
  if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
    throw new ConfigurationError({
      message: `Tool '${name}': timeoutMs must be a positive number of milliseconds, got ${timeoutMs}`,
    });
  }
  if (retries !== undefined && !(Number.isInteger(retries) && retries >= 0)) {
    throw new ConfigurationError({
      message: `Tool '${name}': retries must be a whole number, 0 or more, got ${retries}`,
    });
  }
  let schema: Record<string, unknown>;
  try {
    // The model writes the arguments, so they follow the schema's input side.
    const { $schema: _dialect, ...rest } = z.toJSONSchema(parameters, { io: 'input' }) as Record<
      string,
      unknown
    >;
    schema = rest;
  } catch (error) {
    throw new ConfigurationError({
      message: `Tool '${name}' has parameters that cannot be expressed as JSON schema: ${error instanceof Error ? error.message : String(error)}`,
      cause: error,
    });
  }
  const tool: { -readonly [Key in keyof LlmTool]: LlmTool[Key] } = {
    name,
    description,
    parameters,
    definition: { type: 'function', function: { name, description, parameters: schema } },
    execute: (args, context) => execute(args as z.output<Parameters>, context),
  };
  if (requiresApproval) tool.requiresApproval = requiresApproval as boolean | LlmToolApprovalRule<unknown>;
  if (timeoutMs !== undefined) tool.timeoutMs = timeoutMs;
  if (retries !== undefined) tool.retries = retries;
  return tool;
}
