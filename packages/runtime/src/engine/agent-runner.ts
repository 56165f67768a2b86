import { type Context, context as otelContext, trace } from '@opentelemetry/api';
import {
  AgentError,
  AgentTimeoutError,
  type Conversation,
  createId,
  type RequestContext,
  type ToolCall,
  type ToolMessage,
} from '@switchboard/core';
import type { Agent, AgentReply, AgentReplyWithMetadata } from '../agents/agent.js';
import { endAgentSpan, startAgentSpan } from '../tracing/spans.js';
import type { TurnEvent } from './events.js';

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

function isAsyncIterable(value: unknown): value is AsyncIterable<string> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/** Resolves with `promise`, or rejects with the signal's reason as soon as `signal` aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

async function collect(
  reply: AgentReply,
  signal: AbortSignal,
  onDelta: (delta: string) => void,
): Promise<{ content: string; metadata?: Record<string, unknown> }> {
  if (typeof reply === 'string') return { content: reply };
  if (!isAsyncIterable(reply)) {
    if (typeof reply?.content !== 'string')
      throw new TypeError('run() must return a string, { content }, or an async iterable of strings');
    return reply;
  }
  const iterator = reply[Symbol.asyncIterator]();
  let content = '';
  try {
    for (;;) {
      const next = await untilAborted(iterator.next(), signal);
      if (next.done) {
        // A generator may return `{ metadata }` (e.g. token usage) to keep on the stored message.
        const metadata = (next.value as Partial<AgentReplyWithMetadata> | undefined)?.metadata;
        return metadata && typeof metadata === 'object' ? { content, metadata } : { content };
      }
      const delta = String(next.value);
      content += delta;
      onDelta(delta);
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
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new AgentTimeoutError({ agent: agent.name, timeoutMs })),
    timeoutMs,
  );
  const onTurnAbort = () => controller.abort(turnSignal.reason);
  turnSignal.addEventListener('abort', onTurnAbort, { once: true });
  emit?.({ type: 'agent-start', ...base, message: call.message });

  let status: 'ok' | 'error' = 'ok';
  let content: string;
  let metadata: Record<string, unknown> | undefined;
  let failure: AgentError | undefined;
  try {
    const signal = controller.signal;
    const result = await otelContext.with(trace.setSpan(parent, span), async () => {
      const reply = await untilAborted(
        Promise.resolve().then(() =>
          agent.run(call.message, { signal, toolCall: call, conversation, request }),
        ),
        signal,
      );
      return collect(reply, signal, (delta) => emit?.({ type: 'agent-delta', ...base, delta }));
    });
    content = result.content;
    metadata = result.metadata;
  } catch (error) {
    failure = toAgentError(agent.name, error);
    status = 'error';
    content = failure.message;
  } finally {
    clearTimeout(timer);
    turnSignal.removeEventListener('abort', onTurnAbort);
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
