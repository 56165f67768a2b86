import { type Context, context as otelContext, type Span } from '@opentelemetry/api';
import {
  AgentError,
  AgentTimeoutError,
  type Conversation,
  createId,
  type RequestContext,
  type ToolCall,
  type ToolMessage,
} from '@switchboard/core';
import type { Agent, AgentContext, AgentReply, AgentReplyWithMetadata } from '../agents/agent-contract.js';
import { AgentPause, type AgentResume } from '../agents/agent-pause.js';
import type { EngineMetrics } from '../metrics/engine-metrics.js';
import { isPromiseLike } from '../promise-like.js';
import { endAgentSpan, startAgentSpan } from '../tracing/spans.js';
import { AgentAbort } from './agent-abort.js';
import { describeFailure, keepDetail, noteReply, toAgentError } from './agent-failure.js';
import { settle } from './agent-reply.js';
import { CallContext } from './call-context.js';
import { type Deadline, endDeadline, startDeadline } from './deadlines.js';
import type { TurnEventBody } from './events.js';
import type { FanIn } from './fan-in.js';
import type { GuardOutcome } from './guards.js';
import { isoNow } from './timestamp.js';
import { withSpan } from './trace-context.js';
import type { TurnControl } from './turn-control.js';

/** Everything one agent call needs from its turn. */
export interface AgentCallContext {
  agent: Agent;
  call: ToolCall;
  conversation: Conversation;
  request: RequestContext;
  /** The trace context the agent span is created under (the decision span). */
  parent: Context;
  timeoutMs: number;
  /** The turn's stop button: stopping the turn (or server shutdown) aborts the call. */
  control: TurnControl;
  /** Receives the agent's events; undefined when nobody listens. */
  emit: ((event: TurnEventBody) => void) | undefined;
  /** The saved state and the decisions, when a paused call runs again. */
  resume?: AgentResume;
  /** Store and emit a failed call's error text as it is, rather than a safe description of it. */
  exposeErrorDetails?: boolean;
  /** The fan-in of the call's fan-out, when a sibling set `fanInGraceMs`: told when this call replies, and bounding it by its grace. */
  fanIn?: FanIn;
  /** The correlation id its step was annotated with, for the agent span. */
  correlationId?: string;
  /** The user the agent span names, when not the request's (a resumed turn's requester). */
  traceUserId?: string;
  /**
   * The `toolOutput` guardrails of the call's agent: the reply as they let
   * it through is what is traced, streamed (`agent-end`), stored and seen.
   */
  checkReply?: (content: string) => GuardOutcome | Promise<GuardOutcome>;
  /** Further attempts after a retryable failure (the turn's strategy profile), with exponential backoff and full jitter. */
  retry?: { retries: number; baseDelayMs: number; maxDelayMs: number };
  /** Where the call's duration and error code are recorded. */
  metrics?: EngineMetrics;
}

/** An agent call that paused for approval (the agent threw an `AgentPause`): no reply yet. */
export interface PausedCall {
  readonly paused: true;
  readonly call: ToolCall;
  readonly pause: AgentPause;
}

/** True when an agent call paused rather than replied. */
export function isPausedCall(value: ToolMessage | PausedCall): value is PausedCall {
  return (value as PausedCall).paused === true;
}

/** How a call ended, before it becomes a `tool` message. */
interface CallOutcome {
  content: string;
  metadata?: Record<string, unknown>;
  failure?: AgentError;
}

/** One running call: what it needs to become a `tool` message once it has ended. */
class RunningCall {
  readonly messageId = createId('msg');
  /** The abort of the current attempt. */
  abort = new AgentAbort();
  /** Attempts made so far (1 for the first). */
  attempts = 1;
  readonly options: AgentCallContext;
  readonly span: Span;
  readonly base: AgentEventBase | undefined;
  readonly startedAt = performance.now();

  constructor(options: AgentCallContext) {
    const { agent, call, conversation, emit, parent } = options;
    this.options = options;
    this.span = startAgentSpan(parent, {
      agent: agent.name,
      toolCallId: call.id,
      message: call.message,
      correlationId: options.correlationId,
      userId: options.traceUserId,
    });
    this.base = emit && {
      sessionId: conversation.sessionId,
      turnId: conversation.turnId,
      messageId: this.messageId,
      toolCallId: call.id,
      agent: agent.name,
    };
  }

  finish({ content, metadata, failure }: CallOutcome): ToolMessage {
    const { agent, call, emit, fanIn } = this.options;
    const status = failure ? 'error' : 'ok';
    if (!failure) fanIn?.replied();
    const durationMs = performance.now() - this.startedAt;
    // A call its turn's stop (interrupt, cancel, shutdown) ended is counted apart from the agent's own errors.
    this.options.metrics?.callEnded(
      agent.name,
      failure && this.options.control.stopped !== undefined ? 'cancelled' : status,
      durationMs,
      failure?.code,
    );
    // The span keeps the error's own text: traces are for operators.
    endAgentSpan(this.span, { status, content: failure ? failure.message : content, error: failure });
    const { base } = this;
    if (base && emit) {
      const { sessionId, turnId, messageId, toolCallId, agent: name } = base;
      emit({
        type: 'agent-end',
        sessionId,
        turnId,
        messageId,
        toolCallId,
        agent: name,
        status,
        content,
        endOfMessage: true,
        eventId: '',
      });
    }
    const message: ToolMessage = {
      id: this.messageId,
      role: 'tool',
      name: agent.name,
      toolCallId: call.id,
      content,
      status,
      createdAt: isoNow(),
    };
    const stored = failure ? { ...metadata, errorCode: failure.code } : metadata;
    if (stored) message.metadata = stored;
    noteReply(message, { durationMs: Math.round(durationMs) });
    return message;
  }

  fail(error: unknown): ToolMessage | PausedCall | Promise<ToolMessage | PausedCall> {
    if (AgentPause.isInstance(error)) {
      endAgentSpan(this.span, { status: 'paused', content: error.message });
      return { paused: true, call: this.options.call, pause: error };
    }
    const { agent, exposeErrorDetails, retry, control } = this.options;
    const failure = toAgentError(agent.name, error);
    if (retry && this.attempts <= retry.retries && failure.retryable && control.stopped === undefined)
      return this.#retry(failure, retry);
    const { metadata } = failure;
    if (exposeErrorDetails) return this.finish({ content: failure.message, metadata, failure });
    const reply = this.finish({ content: describeFailure(agent.name, failure), metadata, failure });
    keepDetail(reply, failure.message);
    return reply;
  }

  /** Waits (exponential backoff with full jitter), then runs the call again; the span records each retry. */
  async #retry(
    failure: AgentError,
    { baseDelayMs, maxDelayMs }: NonNullable<AgentCallContext['retry']>,
  ): Promise<ToolMessage | PausedCall> {
    const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** (this.attempts - 1));
    const delayMs = Math.round(Math.random() * ceiling);
    this.span.addEvent('retry', {
      'switchboard.attempt': this.attempts,
      'switchboard.error.code': failure.code,
      'switchboard.retry.delay_ms': delayMs,
    });
    const { control } = this.options;
    const wait = new AgentAbort();
    control.track(wait);
    try {
      await wait.race(new Promise((resolve) => setTimeout(resolve, delayMs)));
    } catch {
      // The turn stopped while waiting: the failure stands.
    } finally {
      control.untrack(wait);
    }
    if (control.stopped !== undefined) return this.fail(control.stopped);
    this.attempts += 1;
    this.span.setAttribute('switchboard.agent.attempts', this.attempts);
    this.abort = new AgentAbort();
    return this.attempt();
  }

  /** One attempt of the call: runs the agent with its timeout and abort signal. */
  attempt(): ToolMessage | PausedCall | Promise<ToolMessage | PausedCall> {
    const { agent, call, conversation, request, parent, timeoutMs, control, emit } = this.options;
    const startedAt = performance.now();
    const { base, abort } = this;
    const context = new CallContext(call, conversation, request, abort, this.options.resume, emit);
    const agentContext = withSpan(parent, this.span);
    let reply: AgentReply | PromiseLike<AgentReply>;
    try {
      reply =
        agentContext === parent
          ? agent.run(call.message, context)
          : otelContext.with(agentContext, runAgent, undefined, agent, call.message, context);
    } catch (error) {
      return this.fail(error);
    }
    const { checkReply } = this.options;
    if (typeof reply === 'string') {
      return checkReply
        ? finishChecked(this, { content: reply }, checkReply)
        : this.finish({ content: reply });
    }

    // The timeout counts from the start of the attempt, including any synchronous work run() did.
    const timer = startDeadline(
      timeoutMs,
      () => abort.abort(new AgentTimeoutError({ agent: agent.name, timeoutMs })),
      startedAt,
    );
    const { fanIn } = this.options;
    const unfollow =
      fanIn && call.fanInGraceMs !== undefined
        ? fanIn.follow(agent.name, call.fanInGraceMs, abort)
        : undefined;
    // A reply a guardrail checks is not streamed as it is written: a delta could carry what it would remove.
    const onDelta =
      base && emit && !checkReply
        ? (delta: string) => {
            const { sessionId, turnId, messageId, toolCallId, agent: name } = base;
            emit({
              type: 'agent-delta',
              sessionId,
              turnId,
              messageId,
              toolCallId,
              agent: name,
              delta,
              eventId: '',
            });
          }
        : undefined;
    const pending = reply;
    // As for run() above: with no span of its own (tracing off, an unsampled turn) nothing is made active.
    const settled =
      agentContext === parent
        ? settle(pending, abort, control, onDelta)
        : otelContext.with(agentContext, () => settle(pending, abort, control, onDelta));
    return finishWhenSettled(settled, timer, this, unfollow, checkReply);
  }
}

type AgentEventBase = {
  sessionId: string;
  turnId: string;
  messageId: string;
  toolCallId: string;
  agent: string;
};

function runAgent(
  agent: Agent,
  message: string,
  context: AgentContext,
): AgentReply | PromiseLike<AgentReply> {
  return agent.run(message, context);
}

/**
 * Runs one agent for one call with its timeout and abort signal, streaming
 * its chunks as `agent-delta` events. Never throws: a failure or a timeout
 * becomes a `tool` message with `status: 'error'` that the orchestrator sees.
 * An agent that answers synchronously is answered synchronously: no timer,
 * promise or abort signal is created for it.
 */
export function runAgentCall(
  options: AgentCallContext,
): ToolMessage | PausedCall | Promise<ToolMessage | PausedCall> {
  const running = new RunningCall(options);
  const { base } = running;
  const { emit } = options;
  if (base && emit) {
    const { sessionId, turnId, messageId, toolCallId, agent } = base;
    const { message } = options.call;
    emit({ type: 'agent-start', sessionId, turnId, messageId, toolCallId, agent, message, eventId: '' });
  }
  return running.attempt();
}

/** A reply blocked by a `toolOutput` guardrail: an error the orchestrator sees, code `blocked`. */
class BlockedReplyError extends AgentError {
  override readonly code = 'blocked';
}

/** Finishes a call with its reply as the `toolOutput` guardrails let it through (or blocked). */
function finishChecked(
  running: RunningCall,
  outcome: AgentReplyWithMetadata,
  checkReply: (content: string) => GuardOutcome | Promise<GuardOutcome>,
): ToolMessage | PausedCall | Promise<ToolMessage | PausedCall> {
  const settle = (checked: GuardOutcome) => {
    if (checked.block) {
      const { guard, reason } = checked.block.error;
      return running.fail(
        new BlockedReplyError({
          agent: running.options.agent.name,
          message: `its reply was blocked by guardrail '${guard}': ${reason}`,
          cause: checked.block.error,
        }),
      );
    }
    return running.finish(checked.text === outcome.content ? outcome : { ...outcome, content: checked.text });
  };
  let checked: GuardOutcome | Promise<GuardOutcome>;
  try {
    checked = checkReply(outcome.content);
  } catch (error) {
    return running.fail(error);
  }
  return isPromiseLike(checked)
    ? Promise.resolve(checked).then(settle, (error) => running.fail(error))
    : settle(checked);
}

/** Finishes the call once its reply settled (`then`, not `await`: one promise fewer, see `settle`). */
function finishWhenSettled(
  settled: Promise<AgentReplyWithMetadata>,
  timer: Deadline,
  running: RunningCall,
  unfollow: (() => void) | undefined,
  checkReply: AgentCallContext['checkReply'],
): Promise<ToolMessage | PausedCall> {
  const done = () => {
    endDeadline(timer);
    unfollow?.();
  };
  return settled.then(
    (outcome) => {
      done();
      return checkReply ? finishChecked(running, outcome, checkReply) : running.finish(outcome);
    },
    (error: unknown) => {
      done();
      return running.fail(error);
    },
  );
}
