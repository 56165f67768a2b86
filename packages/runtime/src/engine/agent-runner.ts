import { type Context, context as otelContext } from '@opentelemetry/api';
import {
  AgentError,
  AgentTimeoutError,
  type Conversation,
  createId,
  type RequestContext,
  type ToolCall,
  type ToolMessage,
} from '@switchboard/core';
import type { Agent, AgentContext, AgentReply, AgentReplyWithMetadata } from '../agents/agent.js';
import { endAgentSpan, startAgentSpan } from '../tracing/spans.js';
import { AgentAbort } from './agent-abort.js';
import type { TurnEvent } from './events.js';
import { withSpan } from './trace-context.js';

/** Everything one agent call needs from its turn. */
export interface AgentCallContext {
  agent: Agent;
  call: ToolCall;
  conversation: Conversation;
  request: RequestContext;
  /** The trace context the agent span is created under (the decision span). */
  parent: Context;
  timeoutMs: number;
  /** Aborted when the whole turn is abandoned (server shutdown). */
  turnSignal: AbortSignal;
  /** Receives the agent's events; undefined when nobody listens. */
  emit: ((event: TurnEvent) => void) | undefined;
}

function isThenable(value: unknown): value is PromiseLike<AgentReply> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

function isAsyncIterable(value: unknown): value is AsyncIterable<string> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/**
 * Runs the agent. A synchronous string reply costs no promise, signal or
 * listener; a pending reply or a stream is raced against the call's abort,
 * which also follows the turn's shutdown signal while the agent runs.
 */
async function invoke(
  agent: Agent,
  message: string,
  context: AgentContext,
  abort: AgentAbort,
  turnSignal: AbortSignal,
  onDelta: ((delta: string) => void) | undefined,
): Promise<AgentReplyWithMetadata> {
  let reply = agent.run(message, context);
  if (typeof reply === 'string') return { content: reply };
  const unfollow = abort.follow(turnSignal);
  try {
    if (isThenable(reply)) reply = await abort.race(reply);
    if (typeof reply === 'string') return { content: reply };
    return await collect(reply, abort, onDelta);
  } finally {
    unfollow();
  }
}

async function collect(
  reply: Exclude<AgentReply, string>,
  abort: AgentAbort,
  onDelta: ((delta: string) => void) | undefined,
): Promise<AgentReplyWithMetadata> {
  if (!isAsyncIterable(reply)) {
    if (typeof reply?.content !== 'string')
      throw new TypeError('run() must return a string, { content }, or an async iterable of strings');
    return reply;
  }
  const iterator = reply[Symbol.asyncIterator]();
  let content = '';
  try {
    for (;;) {
      const next = await abort.race(iterator.next());
      if (next.done) {
        // A generator may return `{ metadata }` (e.g. token usage) to keep on the stored message.
        const metadata = (next.value as Partial<AgentReplyWithMetadata> | undefined)?.metadata;
        return metadata && typeof metadata === 'object' ? { content, metadata } : { content };
      }
      const delta = String(next.value);
      content += delta;
      onDelta?.(delta);
    }
  } catch (error) {
    void iterator.return?.()?.catch(() => undefined);
    throw error;
  }
}

function toAgentError(agent: string, error: unknown): AgentError {
  if (AgentError.isInstance(error)) return error as AgentError;
  return new AgentError({ agent, cause: error });
}

/**
 * Runs one agent for one call with its timeout and abort signal, streaming
 * its chunks as `agent-delta` events. Never throws: a failure or a timeout
 * becomes a `tool` message with `status: 'error'` that the orchestrator sees.
 */
export async function runAgentCall({
  agent,
  call,
  conversation,
  request,
  parent,
  timeoutMs,
  turnSignal,
  emit,
}: AgentCallContext): Promise<ToolMessage> {
  const messageId = createId('msg');
  const base = {
    sessionId: conversation.sessionId,
    turnId: conversation.turnId,
    messageId,
    toolCallId: call.id,
    agent: agent.name,
  };
  const span = startAgentSpan(parent, { agent: agent.name, toolCallId: call.id, message: call.message });
  const abort = new AgentAbort();
  const timer = setTimeout(
    () => abort.abort(new AgentTimeoutError({ agent: agent.name, timeoutMs })),
    timeoutMs,
  );
  emit?.({ type: 'agent-start', ...base, message: call.message });

  let status: 'ok' | 'error' = 'ok';
  let content: string;
  let metadata: Record<string, unknown> | undefined;
  let failure: AgentError | undefined;
  try {
    const onDelta = emit && ((delta: string) => emit({ type: 'agent-delta', ...base, delta }));
    const context: AgentContext = {
      get signal() {
        return abort.signal;
      },
      toolCall: call,
      conversation,
      request,
    };
    const result = await otelContext.with(withSpan(parent, span), () =>
      invoke(agent, call.message, context, abort, turnSignal, onDelta),
    );
    content = result.content;
    metadata = result.metadata;
  } catch (error) {
    failure = toAgentError(agent.name, error);
    status = 'error';
    content = failure.message;
  } finally {
    clearTimeout(timer);
  }
  endAgentSpan(span, { status, content, error: failure });
  emit?.({ type: 'agent-end', ...base, status, content, endOfMessage: true });
  const message: ToolMessage = {
    id: messageId,
    role: 'tool',
    name: agent.name,
    toolCallId: call.id,
    content,
    status,
    createdAt: new Date().toISOString(),
  };
  if (failure) metadata = { ...metadata, errorCode: failure.code };
  if (metadata) message.metadata = metadata;
  return message;
}
