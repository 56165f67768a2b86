import { type Context, context as otelContext } from '@opentelemetry/api';
import {
  type AssistantMessage,
  type Conversation,
  createId,
  type Decision,
  isErrorMessage,
  isRouteToUser,
  MaxHopsExceededError,
  type MessageItem,
  type Orchestrator,
  OrchestratorError,
  RequestContext,
  type ToolCall,
  type ToolMessage,
  type UserMessage,
  validateDecision,
} from '@switchboard/core';
import type { Agent } from '../agents/agent.js';
import { isPromiseLike } from '../promise-like.js';
import { bindMemory, memoryNamespace } from '../stores/memory-binding.js';
import type { MemoryStore } from '../stores/memory-store.js';
import {
  type AppendOptions,
  canAnswerSynchronously,
  canAppendAndRead,
  type RouteStep,
  type SessionLease,
  type SessionStore,
  type SynchronousSessionAccess,
  type TurnRecord,
  type TurnStatus,
} from '../stores/session-store.js';
import {
  endDecisionSpan,
  endTurnSpan,
  startDecisionSpan,
  startTurnSpan,
  traceIdOf,
} from '../tracing/spans.js';
import { runAgentCall } from './agent-runner.js';
import type { TurnEvent } from './events.js';
import type { TurnOptions, TurnRequest, TurnResult } from './turn-types.js';

export type { TurnOptions, TurnRequest, TurnResult } from './turn-types.js';

import { LeaseRenewer } from './lease-renewer.js';
import { MemoryRenewal } from './memory-renewal.js';
import { errorCode, toRouteStep } from './route-step.js';
import { runSteps, type Steps, settled } from './steps.js';
import { isoNow } from './timestamp.js';
import { withSpan } from './trace-context.js';

interface EngineParts {
  orchestrator: Orchestrator;
  agents: ReadonlyMap<string, Agent>;
  sessions: SessionStore;
  memory: MemoryStore;
  /** Aborted to abandon running turns (server shutdown after the grace period). */
  signal: AbortSignal;
}

const noop = () => {};

type Outcome = { reply: string; status: TurnStatus; error?: Error; toolCallId: string };

/**
 * Runs turns: user → orchestrator → agent(s) → orchestrator → … → user.
 * Each message is persisted as it is produced, so the stored conversation is
 * the checkpoint of an interrupted turn.
 *
 * A turn is written as {@link Steps}: it waits only where something is
 * pending, so with a store that answers synchronously (the in-memory one)
 * and an orchestrator and agents that do too, it runs in one go.
 */
export class TurnEngine {
  readonly #parts: EngineParts;
  readonly #options: Required<TurnOptions>;
  readonly #candidateNames: readonly string[];
  readonly #renewer: LeaseRenewer;
  readonly #memoryRenewal: MemoryRenewal | undefined;
  readonly #synchronous: SynchronousSessionAccess | undefined;

  constructor(
    parts: EngineParts,
    {
      maxHops = 10,
      historyWindow = 50,
      agentTimeoutMs = 60_000,
      sessionWaitMs = 10_000,
      leaseTtlMs = 30_000,
      failureMessage = 'Sorry, something went wrong while handling your message. Please try again.',
      exposeErrorDetails = false,
      sessionIdleTtlSeconds = 86_400,
    }: TurnOptions = {},
  ) {
    this.#parts = parts;
    this.#candidateNames = parts.orchestrator.agents.map((agent) => agent.name);
    this.#renewer = new LeaseRenewer(Math.max(250, Math.floor(leaseTtlMs / 3)));
    this.#memoryRenewal = MemoryRenewal.for(parts.memory, sessionIdleTtlSeconds);
    this.#synchronous = canAnswerSynchronously(parts.sessions) ? parts.sessions.synchronous : undefined;
    this.#options = {
      maxHops,
      historyWindow,
      agentTimeoutMs,
      sessionWaitMs,
      leaseTtlMs,
      failureMessage,
      exposeErrorDetails,
      sessionIdleTtlSeconds,
    };
  }

  /**
   * Processes one user message: the result once the user has been answered
   * or the turn failed. A promise when any step had to wait; the result
   * itself (or a synchronous throw) when none did.
   */
  run(request: TurnRequest): TurnResult | Promise<TurnResult> {
    const { memory } = this.#parts;
    const { sessionId, userId, tenantId } = request;
    const owner = { sessionId, userId, tenantId };
    const requestContext = new RequestContext({
      sessionId,
      userId,
      tenantId,
      requestId: request.requestId ?? createId('req'),
      signal: this.#parts.signal,
      memory: (scope) =>
        bindMemory(memory, scope, memoryNamespace(scope, owner), {
          defaultTtlSeconds: scope === 'session' ? this.#options.sessionIdleTtlSeconds : undefined,
        }),
    });
    return RequestContext.run(requestContext, () => runSteps(this.#turn(request, requestContext)));
  }

  *#turn(request: TurnRequest, requestContext: RequestContext): Steps<TurnResult> {
    const acquiring = this.#acquireLease(request.sessionId);
    const lease = isPromiseLike(acquiring) ? ((yield acquiring) as SessionLease) : acquiring;
    this.#renewer.add(lease);
    try {
      return yield* this.#runLeased(request, requestContext, lease);
    } finally {
      this.#renewer.delete(lease);
      // Awaited: the next message of this session may go to another replica, which must find it free.
      if (this.#synchronous) this.#synchronous.release(lease);
      else yield lease.release().catch(noop);
    }
  }

  #acquireLease(sessionId: string): SessionLease | Promise<SessionLease> {
    const { leaseTtlMs, sessionWaitMs } = this.#options;
    const { signal } = this.#parts;
    const free = signal.aborted
      ? undefined
      : this.#synchronous?.tryAcquireLease(sessionId, { ttlMs: leaseTtlMs });
    return (
      free ??
      this.#parts.sessions.acquireLease(sessionId, { ttlMs: leaseTtlMs, waitMs: sessionWaitMs, signal })
    );
  }

  #append(sessionId: string, messages: readonly MessageItem[], options: AppendOptions): void | Promise<void> {
    if (this.#synchronous) this.#synchronous.append(sessionId, messages, options);
    else return this.#parts.sessions.append(sessionId, messages, options);
  }

  *#runLeased(request: TurnRequest, requestContext: RequestContext, lease: SessionLease): Steps<TurnResult> {
    const { orchestrator } = this.#parts;
    const { sessionId, userId, tenantId, onEvent } = request;
    const turnId = createId('turn');
    const startedAt = isoNow();
    const userMessage: UserMessage = {
      id: createId('msg'),
      role: 'user',
      content: request.message,
      createdAt: startedAt,
    };
    if (request.metadata) userMessage.metadata = request.metadata;

    const turnSpan = startTurnSpan({
      orchestrator: orchestrator.name,
      sessionId,
      turnId,
      userId,
      input: request.message,
    });
    const traceId = traceIdOf(turnSpan);
    const turnContext = withSpan(otelContext.active(), turnSpan);
    // Without a listener no event object is even built (an optional call skips its arguments).
    const emit = onEvent;
    emit?.({
      type: 'turn-start',
      sessionId,
      turnId,
      messageId: userMessage.id,
      message: request.message,
      endOfMessage: true,
    });

    const steps: RouteStep[] = [];
    let outcome: Outcome;
    try {
      // In the same tick as the window's store call: with Redis, one round trip carries both.
      this.#memoryRenewal?.renew(memoryNamespace('session', { sessionId, userId, tenantId }));
      const messages = yield* this.#openWindow(sessionId, userMessage, lease);
      const turnStart = messages.length - 1;
      outcome = yield* this.#loop({
        sessionId,
        turnId,
        messages,
        turnStart,
        requestContext,
        turnContext,
        steps,
        emit,
        lease,
      });
    } catch (error) {
      endTurnSpan(turnSpan, { error: error instanceof Error ? error : new Error(String(error)) });
      throw error;
    }

    const endedAt = isoNow();
    const turn: TurnRecord = {
      turnId,
      userMessageId: userMessage.id,
      status: outcome.status,
      startedAt,
      endedAt,
      steps,
    };
    if (traceId) turn.traceId = traceId;
    if (outcome.error) {
      const message = this.#options.exposeErrorDetails ? outcome.error.message : outcome.reply;
      turn.error = { code: errorCode(outcome.error), message };
    }
    const answer: AssistantMessage = {
      id: createId('msg'),
      role: 'assistant',
      content: outcome.reply,
      toolCallId: outcome.toolCallId,
      createdAt: endedAt,
    };
    if (outcome.error) answer.metadata = { status: 'error', errorCode: turn.error?.code };
    try {
      const appended = this.#append(sessionId, [answer], { turn, lease });
      if (appended) yield appended;
    } finally {
      endTurnSpan(turnSpan, { output: outcome.reply, error: outcome.error });
    }

    if (outcome.error) {
      emit?.({
        type: 'error',
        sessionId,
        turnId,
        messageId: createId('evt'),
        code: turn.error!.code,
        message: outcome.reply,
        endOfMessage: true,
      });
    }
    emit?.({
      type: 'message',
      sessionId,
      turnId,
      messageId: answer.id,
      content: outcome.reply,
      endOfMessage: true,
    });
    emit?.({
      type: 'turn-end',
      sessionId,
      turnId,
      messageId: createId('evt'),
      status: outcome.status,
      traceId,
      endOfMessage: true,
      endOfDialog: true,
    });

    const result: TurnResult = { sessionId, turnId, reply: outcome.reply, status: outcome.status, steps };
    if (traceId) result.traceId = traceId;
    // The same as the stored turn: the error's own text only with exposeErrorDetails.
    if (turn.error) result.error = { ...turn.error };
    return result;
  }

  /** Appends the user message and returns the history window ending with it. */
  *#openWindow(sessionId: string, userMessage: UserMessage, lease: SessionLease): Steps<MessageItem[]> {
    const { sessions } = this.#parts;
    const limit = this.#options.historyWindow + 1;
    let messages: MessageItem[];
    if (this.#synchronous) {
      messages = this.#synchronous.appendAndRead(sessionId, [userMessage], { limit, lease });
    } else if (canAppendAndRead(sessions)) {
      messages = yield* settled(sessions.appendAndRead(sessionId, [userMessage], { limit, lease }));
    } else {
      yield* settled(sessions.append(sessionId, [userMessage], { lease }));
      messages = yield* settled(sessions.read(sessionId, { limit }));
    }
    if (messages[messages.length - 1]?.id !== userMessage.id) messages.push(userMessage);
    return messages;
  }

  *#loop(turn: {
    sessionId: string;
    turnId: string;
    messages: MessageItem[];
    turnStart: number;
    requestContext: RequestContext;
    turnContext: Context;
    steps: RouteStep[];
    emit: ((event: TurnEvent) => void) | undefined;
    lease: SessionLease;
  }): Steps<Outcome> {
    const { orchestrator } = this.#parts;
    const { maxHops, failureMessage } = this.#options;
    const { sessionId, turnId, messages, turnStart, steps, emit } = turn;

    let lastResults: readonly ToolMessage[] = [];
    for (let hop = 0; hop < maxHops; hop++) {
      const conversation: Conversation = {
        sessionId,
        turnId,
        messages,
        turnStart,
        hop,
        agents: orchestrator.agents,
        lastResults,
      };
      const decisionSpan = startDecisionSpan(turn.turnContext, {
        orchestrator: orchestrator.name,
        hop,
        candidates: this.#candidateNames,
      });
      const decisionContext = withSpan(turn.turnContext, decisionSpan);
      const startedAt = performance.now();
      let decision: Decision;
      try {
        const pending =
          decisionContext === turn.turnContext
            ? orchestrator.decide(conversation)
            : otelContext.with(decisionContext, orchestrator.decide, orchestrator, conversation);
        decision = validateDecision(isPromiseLike(pending) ? yield pending : pending, conversation.agents);
      } catch (error) {
        // A hand-written `Orchestrator` may throw or reject: the turn ends with that error, not a crash.
        decision = { error: new OrchestratorError({ orchestrator: orchestrator.name, cause: error }) };
      }
      endDecisionSpan(decisionSpan, decision);
      const step = toRouteStep(hop, decision, startedAt, this.#options.exposeErrorDetails);
      steps.push(step);
      emit?.({ type: 'route', sessionId, turnId, messageId: createId('evt'), step, endOfMessage: true });

      if (isErrorMessage(decision)) {
        return {
          reply: decision.userMessage ?? failureMessage,
          status: 'failed',
          error: decision.error,
          toolCallId: `error_${turnId}`,
        };
      }
      const first = Array.isArray(decision) ? decision[0]! : decision;
      if (isRouteToUser(first)) return { reply: first.message, status: 'completed', toolCallId: first.id };

      let results: ToolMessage[];
      if (Array.isArray(decision)) {
        const running = this.#runCalls(decision, conversation, turn, decisionContext);
        results = isPromiseLike(running) ? ((yield running) as ToolMessage[]) : running;
      } else {
        const running = this.#runCall(decision, conversation, turn, decisionContext);
        results = [isPromiseLike(running) ? ((yield running) as ToolMessage) : running];
      }
      const appended = this.#append(sessionId, results, { lease: turn.lease });
      if (appended) yield appended;
      for (const result of results) messages.push(result);
      lastResults = results;
    }
    return {
      reply: failureMessage,
      status: 'failed',
      error: new MaxHopsExceededError({ maxHops }),
      toolCallId: `error_${turnId}`,
    };
  }

  /** Runs one agent call under the decision's span. */
  #runCall(
    call: ToolCall,
    conversation: Conversation,
    turn: { requestContext: RequestContext; emit: ((event: TurnEvent) => void) | undefined },
    decisionContext: Context,
  ): ToolMessage | Promise<ToolMessage> {
    const agent = this.#parts.agents.get(call.toolName)!;
    return runAgentCall({
      agent,
      call,
      conversation,
      request: turn.requestContext,
      parent: decisionContext,
      timeoutMs: agent.timeoutMs ?? this.#options.agentTimeoutMs,
      turnSignal: this.#parts.signal,
      emit: turn.emit,
    });
  }

  /** Runs a fan-out's calls concurrently; their replies come back in call order. */
  #runCalls(
    calls: readonly ToolCall[],
    conversation: Conversation,
    turn: { requestContext: RequestContext; emit: ((event: TurnEvent) => void) | undefined },
    decisionContext: Context,
  ): ToolMessage[] | Promise<ToolMessage[]> {
    const running = calls.map((call) => this.#runCall(call, conversation, turn, decisionContext));
    return running.some(isPromiseLike) ? Promise.all(running) : (running as ToolMessage[]);
  }
}
