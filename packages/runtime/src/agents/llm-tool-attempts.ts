import { setTimeout as delay } from 'node:timers/promises';
import type { Span } from '@opentelemetry/api';
import { BUILT_IN_PROFILES, SystemError } from '@switchboard/core';
import { describeError } from '@switchboard/core/internal';
import type { LlmTool, LlmToolContext } from './llm-tool.js';

/**
 * A tool call ran past its tool's `timeoutMs`: the reason its signal was
 * aborted, and what the model is told. Retryable, like an agent's timeout.
 */
export class ToolTimeoutError extends SystemError {
  readonly code = 'tool_timeout';
  /** The tool's name. */
  readonly tool: string;
  readonly timeoutMs: number;

  constructor({ tool, timeoutMs }: { tool: string; timeoutMs: number }) {
    super({ message: `Tool '${tool}' did not finish within ${timeoutMs} ms` });
    this.tool = tool;
    this.timeoutMs = timeoutMs;
  }

  override get retryable(): boolean {
    return true;
  }
}

/** How the attempts of one tool call ended: with a value, or with the last attempt's error. */
export type ToolAttempts =
  | { ok: true; value: unknown; attempts: number }
  | { ok: false; error: unknown; attempts: number };

/** True for an error worth another try: a timeout, or one that says `retryable: true`. */
function isRetryable(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { retryable?: unknown }).retryable === true;
}

/** One attempt, bounded by the tool's `timeoutMs`: its own signal aborts at the deadline, and it is no longer awaited. */
async function attempt(tool: LlmTool, args: unknown, context: LlmToolContext): Promise<unknown> {
  const { timeoutMs } = tool;
  if (timeoutMs === undefined) return await tool.execute(args, context);
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new ToolTimeoutError({ tool: tool.name, timeoutMs })),
    timeoutMs,
  );
  const signal = AbortSignal.any([context.signal, deadline.signal]);
  const expired = new Promise<never>((_, reject) => {
    deadline.signal.addEventListener('abort', () => reject(deadline.signal.reason), { once: true });
  });
  try {
    // A tool that ignores its signal would hold the agent up to the agent's own timeout.
    return await Promise.race([
      new Promise((resolve) => resolve(tool.execute(args, { ...context, signal }))),
      expired,
    ]);
  } catch (error) {
    // The tool may reject with its own abort error once its signal fires: the timeout is what happened.
    if (deadline.signal.aborted && !context.signal.aborted) throw deadline.signal.reason;
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs a tool with its timeout and retries: a retryable failure (see
 * {@link ToolTimeoutError}) is tried again up to `tool.retries` times —
 * default the turn profile's `agentRetries`, else none — after a wait
 * drawn between 0 and `min(retryMaxDelayMs, retryBaseDelayMs · 2^(n-1))`
 * (exponential backoff, full jitter). The span gets a `retry` event per
 * retry and `switchboard.tool.attempts`. Throws only when the agent's signal
 * aborts; every other failure is returned.
 *
 * @example
 * ```ts
 * const outcome = await executeWithRetries(tool, args, { signal, toolCallId: call.id, agent }, span);
 * ```
 */
export async function executeWithRetries(
  tool: LlmTool,
  args: unknown,
  context: LlmToolContext,
  span: Span,
): Promise<ToolAttempts> {
  const limits = context.agent.conversation?.limits;
  const retries = tool.retries ?? limits?.agentRetries ?? 0;
  const { retryBaseDelayMs, retryMaxDelayMs } = limits ?? BUILT_IN_PROFILES.fallback;
  for (let attempts = 1; ; attempts += 1) {
    span.setAttribute('switchboard.tool.attempts', attempts);
    try {
      return { ok: true, value: await attempt(tool, args, context), attempts };
    } catch (error) {
      if (context.signal.aborted) throw error;
      if (attempts > retries || !isRetryable(error)) return { ok: false, error, attempts };
      const ceiling = Math.min(retryMaxDelayMs, retryBaseDelayMs * 2 ** (attempts - 1));
      const delayMs = Math.round(Math.random() * ceiling);
      const code = (error as { code?: unknown }).code;
      span.addEvent('retry', {
        'switchboard.attempt': attempts,
        ...(typeof code === 'string' ? { 'switchboard.error.code': code } : {}),
        'switchboard.error.message': describeError(error),
        'switchboard.retry.delay_ms': delayMs,
      });
      try {
        await delay(delayMs, undefined, { signal: context.signal });
      } catch {
        // The agent was cancelled while waiting: its reason is what stops the call.
        throw context.signal.reason ?? error;
      }
    }
  }
}
