import { type Context, context as otelContext, type Span, trace } from '@opentelemetry/api';
import type { ChatCompletionMessageFunctionToolCall } from 'openai/resources/chat/completions';
import type { AgentContext } from './agent.js';
import type { AgentApprovalDecision } from './agent-pause.js';
import type { LlmTool } from './llm-tool.js';
import { executeWithRetries, ToolTimeoutError } from './llm-tool-attempts.js';
import type { LlmToolResult } from './llm-tool-filter.js';
import { endToolSpan, startToolSpan } from './llm-tracing.js';

/** What running the model's tool calls needs. */
export interface ToolRunContext {
  tools: ReadonlyMap<string, LlmTool>;
  agent: AgentContext;
  signal: AbortSignal;
  /** The trace context the tool spans nest under. */
  parent: Context;
  /** A person's decisions on the calls that waited for approval, by tool call id. */
  decisions?: ReadonlyMap<string, AgentApprovalDecision>;
  /** The tools the model was offered (its `toolFilter`'s choice); a call to another is refused. Default: all. */
  offered?: ReadonlySet<string>;
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Parses a tool call's JSON arguments; an empty text is `{}`. */
export function parseArguments(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: text.trim() === '' ? {} : JSON.parse(text) };
  } catch (error) {
    return { ok: false, error: describeError(error) };
  }
}

function toText(result: unknown): string {
  if (typeof result === 'string') return result;
  if (result === undefined) return 'done';
  return JSON.stringify(result) ?? String(result);
}

/** A failure the model is told about, so it can fix its call or answer without the tool. */
class ToolFeedback extends Error {}

async function execute(
  call: ChatCompletionMessageFunctionToolCall,
  { tools, agent, signal, decisions, offered }: ToolRunContext,
  span: Span,
): Promise<string> {
  const { name, arguments: rawArguments } = call.function;
  const decision = decisions?.get(call.id);
  if (decision && !decision.approved) {
    const why =
      decision.status === 'expired'
        ? 'nobody approved it in time'
        : `the user rejected it${decision.comment ? `: ${decision.comment}` : ''}`;
    throw new ToolFeedback(`Error: '${name}' was not run: ${why}. Do not call it again for this request.`);
  }
  const tool = tools.get(name);
  const available = [...tools.keys()].filter((key) => !offered || offered.has(key)).join(', ');
  if (!tool) {
    throw new ToolFeedback(
      `Error: there is no tool named '${name}'. Available tools: ${available || '(none)'}.`,
    );
  }
  if (offered && !offered.has(name)) {
    throw new ToolFeedback(
      `Error: '${name}' was not run: it is not available at this point. ${available ? `Available tools: ${available}.` : 'Answer without tools.'}`,
    );
  }
  const parsed = parseArguments(rawArguments);
  if (!parsed.ok)
    throw new ToolFeedback(
      `Error: the arguments for '${name}' are not valid JSON (${parsed.error}). Call it again with a JSON object.`,
    );
  const validated = tool.parameters.safeParse(parsed.value);
  if (!validated.success) {
    const issues = validated.error.issues.map(
      (issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`,
    );
    throw new ToolFeedback(
      `Error: invalid arguments for '${name}': ${issues.join('; ')}. Call it again with corrected arguments.`,
    );
  }
  const outcome = await executeWithRetries(
    tool,
    validated.data,
    { signal, toolCallId: call.id, agent },
    span,
  );
  if (outcome.ok) return toText(outcome.value);
  const { error, attempts } = outcome;
  const tries = attempts > 1 ? ` (${attempts} attempts)` : '';
  const what = ToolTimeoutError.isInstance(error)
    ? `timed out after ${(error as ToolTimeoutError).timeoutMs} ms`
    : `failed: ${describeError(error)}`;
  throw new ToolFeedback(`Error: '${name}' ${what}${tries}`, { cause: error });
}

/**
 * Runs the tool calls of one model answer concurrently, each in its own span,
 * and returns their results in call order. Each tool runs with its timeout
 * and retries (see `executeWithRetries`). Unknown tools, tools not offered,
 * malformed or invalid arguments, throwing and timed-out tools become error
 * text for the model rather than failures of the agent; only cancellation throws.
 *
 * @example
 * ```ts
 * const results = await runToolCalls(turn.toolCalls, { tools, agent: context, signal, parent });
 * ```
 */
export async function runToolCalls(
  calls: readonly ChatCompletionMessageFunctionToolCall[],
  context: ToolRunContext,
): Promise<LlmToolResult[]> {
  return Promise.all(
    calls.map(async (call): Promise<LlmToolResult> => {
      const { name } = call.function;
      const span = startToolSpan(context.parent, {
        name,
        toolCallId: call.id,
        input: call.function.arguments,
      });
      try {
        const content = await otelContext.with(trace.setSpan(context.parent, span), () =>
          execute(call, context, span),
        );
        endToolSpan(span, { output: content });
        return { name, toolCallId: call.id, content, ok: true };
      } catch (error) {
        if (!(error instanceof ToolFeedback)) {
          endToolSpan(span, { output: '', error });
          throw error;
        }
        endToolSpan(span, { output: error.message, error: error.cause ?? error });
        return { name, toolCallId: call.id, content: error.message, ok: false };
      }
    }),
  );
}
