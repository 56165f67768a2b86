import { context as otelContext } from '@opentelemetry/api';
import {
  type AssistantMessage,
  type Conversation,
  createId,
  type Decision,
  FanOutNotAllowedError,
  type GuardrailBlockedError,
  isErrorMessage,
  isRouteToUser,
  type JsonValue,
  MaxHopsExceededError,
  type MessageItem,
  type Orchestrator,
  OrchestratorError,
  type StepAnnotations,
  StoreUnavailableError,
  type TokenUsage,
  type ToolCall,
  type ToolMessage,
  TurnDeadlineError,
  validateDecision,
} from '@switchboard/core';
import type { Agent } from '../agents/agent.js';
import type { AgentResume } from '../agents/agent-pause.js';
import type { GuardStage } from '../guardrails/guardrail.js';
import type { Logger } from '../logging/logger.js';
import { failedTurn, logTurnFailure } from '../logging/turn-failure.js';
import type { EngineMetrics } from '../metrics/engine-metrics.js';
import { isPromiseLike } from '../promise-like.js';
import type { AppendOptions, SessionStore } from '../stores/session-store.js';
import {
  endDecisionSpan,
  endTurnSpan,
  startDecisionSpan,
  startTurnSpan,
  type TurnSpanOutcome,
  traceIdOf,
} from '../tracing/spans.js';
import {
  type ApprovalRecord,
  type InnerStep,
  pendingApprovals,
  publicApproval,
  type RouteStep,
  type StepCall,
  type TurnStatus,
  transition,
} from '../turns/turn-record.js';
import { isPausedCall, orchestratorReply, type PausedCall, runAgentCall } from './agent-runner.js';
import { type ApprovalGate, refusalMessage, verdictFor, withdraw } from './approvals.js';
import { directDecision } from './direct-call.js';
import { FanIn } from './fan-in.js';
import { type GuardOutcome, Guards } from './guards.js';
import type { Profiles } from './profiles.js';
import { errorCode, toRouteStep } from './route-step.js';
import { type Steps, settled } from './steps.js';
import { isoNow } from './timestamp.js';
import { withSpan } from './trace-context.js';
import type { TraceNaming } from './trace-labels.js';
import { addUsage, type TurnState, usageOf } from './turn-state.js';
import type { TurnOptions, TurnResult } from './turn-types.js';

/** How a turn (or the part of it this process runs) ended. */
export type Outcome =
  | {
      status: Exclude<TurnStatus, 'running' | 'awaiting_approval'>;
      reply: string;
      error?: Error;
      toolCallId: string;
    }
  | { status: 'awaiting_approval' };

const PAUSED: Outcome = { status: 'awaiting_approval' };

/** An outcome that ends the turn. */
type Ending = Exclude<Outcome, { status: 'awaiting_approval' }>;

/** What the loop needs from its app, fixed for its lifetime. */
export interface LoopParts {
  orchestrator: Orchestrator;
  agents: ReadonlyMap<string, Agent>;
  sessions: SessionStore;
  gate: ApprovalGate;
  /** The app's guardrails, by stage. */
  guards: Guards;
  /** The app's strategy profiles. */
  profiles: Profiles;
  options: Required<
    Omit<
      TurnOptions,
      'approvalPolicy' | 'guardrails' | 'profiles' | 'profile' | 'reviews' | 'requestProfiles'
    >
  >;
  /** Where a failed turn's error and detail go (clients get only a safe message). */
  logger?: Logger;
  /** Where turn and agent-call metrics are recorded. */
  metrics?: EngineMetrics;
  /** Names and tags each turn's trace. */
  naming: TraceNaming;
}

/**
 * Runs a turn that holds its session's lease, from where it stands to its
 * end or its next pause: decide, check approvals, run agents, store, repeat.
 * Every write of a turn goes through {@link TurnLoop.write}.
 */
export class TurnLoop {
  readonly #parts: LoopParts;
  readonly #candidateNames: readonly string[];

  constructor(parts: LoopParts) {
    this.#parts = parts;
    this.#candidateNames = parts.orchestrator.agents.map((agent) => agent.name);
  }

  /**
   * The one place a turn writes: messages (user message excepted, which
   * `openTurn` stores) together with the turn's record as it now stands.
   * Nothing is written once the turn lost its lease; once it was stopped,
   * only its closing write (`closing`) is.
   *
   * A `deferred` write is sent at once but not waited for: the next write
   * (or {@link TurnLoop.confirmWrites}, before any agent runs) waits for it
   * too, so a single-hop turn waits for the store once after the agent
   * replied; the store's lease check keeps the writes safe meanwhile, and
   * they reach the store in the order they were made. The `last` write of
   * the part of the turn this process runs may release the lease in the same
   * round trip, when the runtime says so (`releaseWithLastWrite`). Messages
   * {@link TurnLoop.hold | held} until now go first, in the same call.
   */
  write(
    turn: TurnState,
    messages: readonly MessageItem[],
    {
      closing = false,
      last = false,
      deferred = false,
    }: { closing?: boolean; last?: boolean; deferred?: boolean } = {},
  ): void | Promise<void> {
    const { control, lease } = turn.runtime;
    if (control.stopped !== undefined) {
      if (control.leaseLost) throw control.stopped;
      if (!closing) return;
    }
    turn.wrote = true;
    const { idleTtlMs } = turn.runtime;
    const options: AppendOptions = { turn: turn.snapshot(), lease };
    if (idleTtlMs !== undefined) options.idleTtlMs = idleTtlMs;
    if (last && turn.runtime.releaseWithLastWrite) options.releaseLease = true;
    const { held } = turn;
    let sending = messages;
    if (held) {
      clearImmediate(turn.heldFlush);
      turn.held = undefined;
      turn.heldFlush = undefined;
      sending = messages.length === 0 ? held : [...held, ...messages];
    }
    const written = turn.runtime.sessions.append(turn.sessionId, sending, options);
    // What the orchestrator sees next is the history as stored (a fan-out's replies in the order they came).
    for (const message of messages) if (message.role !== 'assistant') turn.messages.push(message);
    const earlier = turn.unconfirmed;
    if (!isPromiseLike(written)) {
      if (!earlier) return;
      turn.unconfirmed = undefined;
      return earlier;
    }
    const both = earlier ? Promise.all([earlier, written]).then(noop) : written;
    if (!deferred) {
      turn.unconfirmed = undefined;
      return both;
    }
    // Handled here so that a failure is not reported as unhandled before the turn waits for it.
    both.then(undefined, noop);
    turn.unconfirmed = both;
  }

  /**
   * Holds an agent's reply to go with the turn's next write, so that a
   * single-hop turn stores its reply, its answer and its record in one call.
   * The orchestrator sees the reply at once. Should nothing write before the
   * next turn of the event loop (the orchestrator awaits something while it
   * decides), the reply is sent then, without waiting, as a `deferred` write:
   * it is stored while the next decision is made, in order, as before. With
   * a store that answers at once, the reply is written at once.
   */
  hold(turn: TurnState, messages: readonly MessageItem[]): void {
    // As `write`: nothing once the turn lost its lease, and a stopped turn keeps only its closing write.
    const { control } = turn.runtime;
    if (control.stopped !== undefined) {
      if (control.leaseLost) throw control.stopped;
      return;
    }
    // A store that answers at once (in memory) gains nothing from one call instead of two.
    if (turn.storeAnswersAtOnce) {
      this.write(turn, messages, { deferred: true });
      return;
    }
    for (const message of messages) if (message.role !== 'assistant') turn.messages.push(message);
    if (turn.held) turn.held.push(...messages);
    else turn.held = [...messages];
    turn.heldFlush ??= setImmediate(() => this.#sendHeld(turn));
  }

  /** Sends the held messages now, without waiting; a failure waits for the turn's next write or confirm. */
  #sendHeld(turn: TurnState): void {
    clearImmediate(turn.heldFlush);
    turn.heldFlush = undefined;
    if (!turn.held) return;
    try {
      this.write(turn, [], { deferred: true });
    } catch (error) {
      const failed = Promise.reject(error);
      failed.then(undefined, noop);
      turn.unconfirmed = failed;
    }
  }

  /** Waits for the turn's deferred (and held) writes: before an agent runs, the store must have what came before. */
  *confirmWrites(turn: TurnState): Steps<void> {
    if (turn.held) this.#sendHeld(turn);
    const pending = turn.unconfirmed;
    if (!pending) return;
    turn.unconfirmed = undefined;
    yield* settled(pending);
  }

  /** Starts the span of the part of the turn this process runs (a resumed part links to the earlier ones). */
  startPart(
    turn: TurnState,
    resumed?: 'approval' | 'recovery' | 'cancel',
    attributes?: Record<string, string>,
  ): void {
    const { orchestrator } = this.#parts;
    const { requestContext } = turn.runtime;
    const { naming } = this.#parts;
    const span = startTurnSpan({
      orchestrator: orchestrator.name,
      traceName: resumed
        ? naming.nameFor(resumed)
        : (turn.runtime.trace?.name ?? naming.nameFor(turn.runtime.entryPoint ?? 'app.chat()')),
      sessionId: turn.sessionId,
      turnId: turn.turnId,
      userId: requestContext.userId,
      input: turn.userText,
      links: turn.traces,
      resumed,
      attributes,
      tenantId: requestContext.tenantId,
      keyName: turn.runtime.keyName,
    });
    turn.span = span;
    turn.turnContext = withSpan(otelContext.active(), span);
    const traceId = traceIdOf(span);
    if (traceId) {
      turn.traceId = traceId;
      const part = { traceId, spanId: span.spanContext().spanId };
      if (turn.traces) turn.traces.push(part);
      else turn.traces = [part];
    }
  }

  /** Ends the span of the part of the turn this process ran, tagged with the agents the turn called. */
  endPart(turn: TurnState, outcome: TurnSpanOutcome): void {
    const { span } = turn;
    if (!span) return;
    if (span.isRecording()) outcome.tags = this.#parts.naming.tagsFor(turn.steps, turn.runtime.trace?.tags);
    endTurnSpan(span, outcome);
  }

  /**
   * Ends the span of a turn that stopped with an error thrown rather than an
   * ending (its store went down, its lease was lost), and counts the turn
   * with status `error`.
   */
  abandon(turn: TurnState, error: unknown): void {
    this.#parts.metrics?.turnEnded('error', turn.startedAt, turn.hop);
    this.endPart(turn, { error: asError(error) });
  }

  /** Ends a turn a guardrail blocked (its message, or its answer): state `blocked`, the guardrail's reply. */
  *block(turn: TurnState, stage: GuardStage, block: NonNullable<GuardOutcome['block']>): Steps<TurnResult> {
    const { guard, reason } = block.error;
    this.#addNote(turn, 'guardrail', { stage, guard, action: 'block', reason });
    return yield* this.finish(turn, this.#blocked(turn, block));
  }

  /** Records what guardrails rewrote (redactions) as a `guardrail` note step. */
  noteRewrites(turn: TurnState, stage: GuardStage, rewrites: NonNullable<GuardOutcome['rewrites']>): void {
    this.#addNote(turn, 'guardrail', {
      stage,
      action: 'rewrite',
      rewrites: rewrites.map(
        ({ guard, reason }): JsonValue => (reason === undefined ? { guard } : { guard, reason }),
      ),
    });
  }

  #blocked(turn: TurnState, block: NonNullable<GuardOutcome['block']>): Ending {
    return {
      status: 'blocked',
      reply: block.message ?? this.#parts.options.blockedMessage,
      error: block.error,
      toolCallId: `blocked_${turn.turnId}`,
    };
  }

  /** Adds a note step to the turn at once (not with a decision), and emits it. */
  #addNote(turn: TurnState, label: string, annotations: StepAnnotations): void {
    const step: RouteStep = {
      hop: turn.hop,
      kind: 'note',
      calls: [],
      label,
      decidedAt: isoNow(),
      durationMs: 0,
      annotations,
    };
    addStep(turn, step);
  }

  /** Runs the turn from where it stands to its end or its next pause, and stores how it ended. */
  *drive(turn: TurnState): Steps<TurnResult> {
    let outcome: Outcome;
    // The profile's deadline counts this part of the turn (not the time it waited for a person).
    const timeoutMs = turn.limits?.turnTimeoutMs;
    const deadline =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => turn.runtime.control.stop(new TurnDeadlineError({ timeoutMs })), timeoutMs);
    try {
      outcome = yield* this.#loop(turn);
      clearTimeout(deadline);
    } catch (error) {
      clearTimeout(deadline);
      this.abandon(turn, error);
      throw outcomeOf(turn, error);
    }
    try {
      return yield* this.finish(turn, outcome);
    } catch (error) {
      // The last write (and any reply sent before it without waiting) may have been stored.
      throw outcomeOf(turn, error);
    }
  }

  /** Stores the end (or the pause) of the turn, ends its span, and emits its last events. */
  *finish(turn: TurnState, ending: Outcome): Steps<TurnResult> {
    const { emit } = turn.runtime;
    const { sessionId, turnId } = turn;
    if (ending.status === 'awaiting_approval') {
      turn.status = transition(turn.status, 'awaiting_approval');
      this.#parts.metrics?.turnEnded(turn.status, turn.startedAt, turn.hop);
      try {
        yield* settled(this.write(turn, [], { last: true }));
      } finally {
        this.endPart(turn, { output: pendingSummary(turn), status: turn.status });
      }
      const pending = pendingApprovals(turn);
      if (emit) {
        for (const approval of pending) {
          emit({
            type: 'approval-request',
            sessionId,
            turnId,
            messageId: createId('evt'),
            approvalId: approval.id,
            toolCallId: approval.toolCallId,
            agent: approval.agent,
            message: approval.message,
            reason: approval.reason,
            risk: approval.risk,
            expiresAt: approval.expiresAt,
            endOfMessage: true,
          });
        }
        emit(turnEnd(turn));
      }
      return this.#result(turn, this.#parts.options.approvalMessage, pending);
    }

    let outcome: Ending = ending;
    const { guards } = this.#parts;
    if (
      outcome.status === 'completed' &&
      guards.output.length > 0 &&
      turn.runtime.control.stopped === undefined
    ) {
      const checked = yield* settled(
        Guards.run(guards.output, 'output', outcome.reply, turn.runtime.requestContext),
      );
      if (checked.block) {
        const { guard, reason } = checked.block.error;
        this.#addNote(turn, 'guardrail', { stage: 'output', guard, action: 'block', reason });
        outcome = this.#blocked(turn, checked.block);
      } else if (checked.rewrites) {
        this.noteRewrites(turn, 'output', checked.rewrites);
        outcome = { ...outcome, reply: checked.text };
      }
    }
    turn.status = transition(turn.status, outcome.status);
    turn.endedAt = isoNow();
    this.#parts.metrics?.turnEnded(turn.status, turn.startedAt, turn.hop);
    if (turn.approvals) {
      for (const approval of pendingApprovals(turn)) {
        withdraw(approval, `the turn ended (${outcome.status}) before a decision`);
      }
    }
    if (outcome.error) {
      const message = this.#parts.options.exposeErrorDetails ? outcome.error.message : outcome.reply;
      turn.error = { code: errorCode(outcome.error), message };
      // A blocked turn is logged too (a warning): operators see what was refused and, for a check that broke, why.
      if (outcome.status === 'failed' || outcome.status === 'blocked') {
        logTurnFailure(this.#parts.logger, outcome.error, failedTurn(turn, this.#parts.orchestrator.name));
      }
    }
    const answer: AssistantMessage = {
      id: turn.answerId ?? createId('msg'),
      role: 'assistant',
      content: outcome.reply,
      toolCallId: outcome.toolCallId,
      createdAt: turn.endedAt,
    };
    if (turn.error)
      answer.metadata = {
        status: outcome.status === 'failed' ? 'error' : outcome.status,
        errorCode: turn.error.code,
      };
    try {
      yield* settled(this.write(turn, [answer], { closing: true, last: true }));
    } finally {
      this.endPart(turn, { output: outcome.reply, error: outcome.error, status: turn.status });
    }
    if (emit) {
      if (turn.error) {
        emit({
          type: 'error',
          sessionId,
          turnId,
          messageId: createId('evt'),
          code: turn.error.code,
          message: outcome.reply,
          endOfMessage: true,
        });
      }
      emit({
        type: 'message',
        sessionId,
        turnId,
        messageId: answer.id,
        content: outcome.reply,
        endOfMessage: true,
      });
      emit(turnEnd(turn));
    }
    return this.#result(turn, outcome.reply);
  }

  #result(turn: TurnState, reply: string, pending?: TurnResult['approvals']): TurnResult {
    const result: TurnResult = {
      sessionId: turn.sessionId,
      turnId: turn.turnId,
      reply,
      status: turn.status,
      steps: turn.steps,
    };
    if (pending && pending.length > 0) result.approvals = pending.map(publicApproval);
    if (turn.usage) result.usage = turn.usage;
    if (turn.span && turn.traceId) result.traceId = turn.traceId;
    // The same as the stored turn: the error's own text only with exposeErrorDetails.
    if (turn.error) result.error = { ...turn.error };
    return result;
  }

  /** The outcome of a stopped turn: interrupted, or (lease lost) a throw, since it may store nothing more. */
  #stopped(turn: TurnState): Outcome {
    const { control } = turn.runtime;
    if (control.leaseLost) throw control.stopped;
    if (TurnDeadlineError.isInstance(control.stopped)) return this.#limit(turn, control.stopped as Error);
    return {
      status: 'interrupted',
      reply: this.#parts.options.interruptedMessage,
      error: asError(control.stopped),
      toolCallId: `interrupt_${turn.turnId}`,
    };
  }

  *#loop(turn: TurnState): Steps<Outcome> {
    const { orchestrator, options } = this.#parts;
    const { failureMessage } = options;
    const { control } = turn.runtime;
    const { turnId } = turn;
    const turnContext = turn.turnContext ?? otelContext.active();

    if (turn.answerApprovalId !== undefined) return this.#approvedAnswer(turn);
    if (turn.unanswered.length > 0) {
      const calls = turn.unanswered;
      turn.unanswered = [];
      const conversation = this.#conversation(turn, Math.max(0, turn.hop - 1));
      const paused = yield* this.#runCalls(turn, calls, conversation, turnContext);
      if (paused) return PAUSED;
      if (turn.unansweredStep) turn.lastResults = turn.repliesTo(turn.unansweredStep);
    }

    for (;;) {
      if (control.stopped !== undefined) return this.#stopped(turn);
      const maxHops = turn.limits?.maxHops ?? options.maxHops;
      if (turn.hop >= maxHops) return this.#limit(turn, new MaxHopsExceededError({ maxHops }));
      const hop = turn.hop++;
      const { recorder } = turn;
      recorder.hop = hop;
      const conversation = this.#conversation(turn, hop);
      const decisionSpan = startDecisionSpan(turnContext, {
        orchestrator: orchestrator.name,
        hop,
        candidates: this.#candidateNames,
      });
      const decisionContext = withSpan(turnContext, decisionSpan);
      const startedAt = performance.now();
      let decision: Decision;
      try {
        const pending =
          turn.direct !== undefined
            ? directDecision(turn.direct, conversation)
            : decisionContext === turnContext
              ? orchestrator.decide(conversation)
              : otelContext.with(decisionContext, orchestrator.decide, orchestrator, conversation);
        // Not raced against a stop: the orchestrator gets the turn's signal (RequestContext.signal) to give up
        // its own work, and the stop is noticed as soon as it answers. Racing cost two promises per decision.
        decision = validateDecision(isPromiseLike(pending) ? yield pending : pending, conversation.agents);
      } catch (error) {
        // A hand-written `Orchestrator` may throw or reject: the turn ends with that error, not a crash.
        decision = { error: new OrchestratorError({ orchestrator: orchestrator.name, cause: error }) };
      }
      // Agents' tasks are checked before they are recorded or run: a rewrite is what is stored and sent.
      if (this.#parts.guards.checksToolInput && !isErrorMessage(decision))
        decision = yield* this.#checkCalls(turn, decision);
      if (turn.recorder.profileName !== undefined) decision = this.#switchProfile(turn, decision);
      const { limits } = turn;
      if (limits && !limits.allowFanOut && Array.isArray(decision) && decision.length > 1) {
        decision = {
          error: new FanOutNotAllowedError({ profile: limits.profile, calls: decision.length }),
          userMessage: 'Sorry, this request needs several agents at once, which is not allowed here.',
        };
      }
      const step = toRouteStep(hop, decision, startedAt, options.exposeErrorDetails);
      // The decision's span stays open over the calls it made, so that every agent span lies inside it.
      endDecisionSpan(decisionSpan, decision, recorder, { end: false, durationMs: step.durationMs });
      try {
        if (control.stopped !== undefined) return this.#stopped(turn);
        this.#recordStep(turn, step);

        if (isErrorMessage(decision)) {
          return {
            reply: decision.userMessage ?? failureMessage,
            status: 'failed',
            error: decision.error,
            toolCallId: `error_${turnId}`,
          };
        }
        const calls = Array.isArray(decision) ? decision : [decision];
        const first = calls[0] as ToolCall;
        if (isRouteToUser(first)) {
          if (first.requiresApproval || turn.escalation !== undefined) {
            // The answer waits for a person: it is kept on the approval, and delivered once approved.
            const approval = this.#parts.gate.openForAnswer(
              turn.escalation === undefined ? first : { ...first, reason: turn.escalation },
            );
            addApprovals(turn, [approval]);
            const stepCall = step.calls[0];
            if (stepCall) stepCall.approvalId = approval.id;
            turn.answerApprovalId = approval.id;
            return PAUSED;
          }
          return { reply: first.message, status: 'completed', toolCallId: first.id };
        }
        const paused = yield* this.#runCalls(turn, calls, conversation, decisionContext, step.calls);
        if (paused) return PAUSED;
      } finally {
        decisionSpan.end();
      }
    }
  }

  /** The decision with its calls' tasks as the `toolInput` guardrails let them through; blocked calls are noted on the turn. */
  *#checkCalls(turn: TurnState, decision: ToolCall | ToolCall[]): Steps<ToolCall | ToolCall[]> {
    const calls = Array.isArray(decision) ? decision : [decision];
    const checkedCalls: ToolCall[] = [];
    const recorded: JsonValue[] = [];
    for (const call of calls) {
      const checks = isRouteToUser(call) ? [] : this.#parts.guards.forAgent('toolInput', call.toolName);
      if (checks.length === 0) {
        checkedCalls.push(call);
        continue;
      }
      const checked = yield* settled(
        Guards.run(checks, 'toolInput', call.message, turn.runtime.requestContext, call.toolName),
      );
      if (checked.block) {
        if (!turn.blockedCalls) turn.blockedCalls = new Map();
        turn.blockedCalls.set(call.id, checked.block.error);
        const { guard, reason } = checked.block.error;
        recorded.push({ toolCallId: call.id, guard, action: 'block', reason });
        checkedCalls.push(call);
      } else if (checked.rewrites) {
        for (const { guard, reason } of checked.rewrites)
          recorded.push(
            reason === undefined
              ? { toolCallId: call.id, guard, action: 'rewrite' }
              : { toolCallId: call.id, guard, action: 'rewrite', reason },
          );
        checkedCalls.push({ ...call, message: checked.text });
      } else checkedCalls.push(call);
    }
    if (recorded.length > 0) turn.recorder.annotate({ guardrails: recorded });
    return Array.isArray(decision) ? checkedCalls : (checkedCalls[0] as ToolCall);
  }

  /** The end of a turn whose answer waited for a person: the answer once approved, the refusal otherwise. */
  #approvedAnswer(turn: TurnState): Outcome {
    const approval = turn.approvals?.find((record) => record.id === turn.answerApprovalId);
    if (!approval || approval.status === 'pending') return PAUSED;
    if (approval.status === 'approved')
      return { status: 'completed', reply: approval.message, toolCallId: approval.toolCallId };
    const { answerRejectedMessage } = this.#parts.options;
    const comment = approval.comment?.trim();
    return {
      status: 'completed',
      reply: comment ? `${answerRejectedMessage} (${comment})` : answerRejectedMessage,
      toolCallId: approval.toolCallId,
    };
  }

  /** Takes the profile a router asked for (`useProfile`) from the next decision on; an unknown one fails this decision. */
  #switchProfile(turn: TurnState, decision: Decision): Decision {
    const { recorder } = turn;
    const name = recorder.profileName as string;
    recorder.profileName = undefined;
    const limits = this.#parts.profiles.get(name);
    if (!limits) {
      const known = this.#parts.profiles.names.join(', ');
      return {
        error: new OrchestratorError({
          orchestrator: this.#parts.orchestrator.name,
          cause: new Error(`useProfile('${name}'): the app has no such profile (${known})`),
        }),
      };
    }
    turn.limits = limits;
    recorder.note('profile', { profile: name });
    return decision;
  }

  /**
   * The end of a turn that hit a limit (its hops, its deadline): with a
   * profile whose `onLimit` is `partial`, the best result it had, with a note;
   * the app's failure message otherwise.
   */
  #limit(turn: TurnState, error: Error): Ending {
    const partial = turn.limits?.onLimit === 'partial';
    return {
      status: 'failed',
      reply: partial ? partialAnswer(turn, error) : this.#parts.options.failureMessage,
      error,
      toolCallId: `limit_${turn.turnId}`,
    };
  }

  /** Adds the decision's step (after any notes the orchestrator recorded) to the turn, and emits them. */
  #recordStep(turn: TurnState, step: RouteStep): void {
    const { recorder } = turn;
    const { notes, annotations } = recorder;
    if (notes) {
      recorder.notes = undefined;
      for (const note of notes) {
        addStep(turn, note);
      }
    }
    if (annotations) {
      recorder.annotations = undefined;
      step.annotations = annotations;
    }
    if (recorder.tokens) {
      step.usage = recorder.tokens;
      turn.usage = addUsage(turn.usage, recorder.tokens);
      recorder.tokens = undefined;
    }
    addStep(turn, step);
  }

  /**
   * Runs the calls of one step: those that need a person's approval get one
   * (and wait), refused ones become error replies, the rest run at once,
   * each reply stored as it arrives; an agent that pauses on an action of
   * its own gets approvals too. True when the turn must pause.
   */
  *#runCalls(
    turn: TurnState,
    calls: readonly ToolCall[],
    conversation: Conversation,
    decisionContext: ReturnType<typeof otelContext.active>,
    stepCalls?: StepCall[],
  ): Steps<boolean> {
    const { gate } = this.#parts;
    const { requestContext } = turn.runtime;
    const step: StepRun = { calls, results: new Array(calls.length), paused: false, stepCalls };
    const toRun: Array<{ index: number; resume?: AgentResume }> = [];
    let refusals: ToolMessage[] | undefined;
    let checks: Array<[number, ReturnType<ApprovalGate['check']>]> | undefined;

    for (let index = 0; index < calls.length; index += 1) {
      const call = calls[index] as ToolCall;
      const blocked = turn.blockedCalls?.get(call.id);
      if (blocked) {
        const refusal = blockedReply(call, blocked);
        step.results[index] = refusal;
        if (refusals) refusals.push(refusal);
        else refusals = [refusal];
        continue;
      }
      const recorded = turn.approvals?.filter((approval) => approval.toolCallId === call.id);
      if (recorded && recorded.length > 0) {
        const verdict = verdictFor(recorded);
        if (verdict.action === 'wait') step.paused = true;
        else if (verdict.action === 'run') toRun.push({ index, resume: verdict.resume });
        else {
          const refusal = refusalMessage(verdict.approval);
          step.results[index] = refusal;
          if (refusals) refusals.push(refusal);
          else refusals = [refusal];
        }
      } else if (gate.mayRequire(call)) {
        const check: [number, ReturnType<ApprovalGate['check']>] = [index, gate.check(call, requestContext)];
        if (checks) checks.push(check);
        else checks = [check];
      } else toRun.push({ index });
    }

    if (checks) {
      if (checks.some(([, needed]) => isPromiseLike(needed))) {
        checks = (yield Promise.all(
          checks.map(async ([index, needed]) => [index, await needed] as [number, Awaited<typeof needed>]),
        )) as typeof checks;
      }
      for (const [index, needed] of checks as Array<[number, Awaited<ReturnType<ApprovalGate['check']>>]>) {
        if (!needed) {
          toRun.push({ index });
          continue;
        }
        const approval = gate.open(calls[index] as ToolCall, needed);
        addApprovals(turn, [approval]);
        const stepCall = stepCalls?.[index];
        if (stepCall) stepCall.approvalId = approval.id;
        step.paused = true;
      }
      toRun.sort((left, right) => left.index - right.index);
    }

    if (refusals) yield* settled(this.write(turn, refusals));
    // An agent's side effects wait until what came before them is stored.
    if (turn.unconfirmed || turn.held) yield* this.confirmWrites(turn);

    if (toRun.length === 1) {
      const { index, resume } = toRun[0] as { index: number; resume?: AgentResume };
      const running = this.#runCall(turn, calls[index] as ToolCall, conversation, decisionContext, resume);
      const outcome = isPromiseLike(running) ? ((yield running) as Awaited<typeof running>) : running;
      const reply = this.#settleCall(turn, step, index, outcome);
      // Goes with the next write (the answer's, in a single-hop turn), or is sent without waiting (see hold).
      if (reply) this.hold(turn, [reply]);
    } else if (toRun.length > 1) {
      yield* this.#runConcurrently(turn, step, toRun, conversation, decisionContext);
    }

    if (turn.runtime.control.stopped !== undefined) return false;
    if (step.paused) return true;
    turn.lastResults = step.results.filter((reply): reply is ToolMessage => reply !== undefined);
    return false;
  }

  /** A call's reply, to store; or, when its agent paused, undefined once the approvals it asked for are recorded. */
  #settleCall(
    turn: TurnState,
    step: StepRun,
    index: number,
    outcome: ToolMessage | PausedCall,
  ): ToolMessage | undefined {
    if (!isPausedCall(outcome)) {
      // The orchestrator's copy of a failure carries the error's own text; the stored reply does not.
      step.results[index] = orchestratorReply(outcome);
      const { metadata } = outcome;
      if (metadata) {
        const usage = usageOf(outcome);
        if (usage) countUsage(turn, usage);
        if (Array.isArray(metadata.innerSteps)) nestSteps(turn, outcome.toolCallId, metadata.innerSteps);
      }
      return outcome;
    }
    const approvals = this.#parts.gate.openFromAgent(outcome.call, outcome.pause);
    addApprovals(turn, approvals);
    const stepCall = step.stepCalls?.[index];
    if (stepCall && approvals[0]) stepCall.approvalId ??= approvals[0].id;
    step.paused = true;
    return undefined;
  }

  /** Runs a fan-out's calls concurrently; each reply is stored as soon as it arrives, not when the slowest does. */
  *#runConcurrently(
    turn: TurnState,
    step: StepRun,
    toRun: ReadonlyArray<{ index: number; resume?: AgentResume }>,
    conversation: Conversation,
    decisionContext: ReturnType<typeof otelContext.active>,
  ): Steps<void> {
    const ready: ToolMessage[] = [];
    const waiting: Array<Promise<void>> = [];
    const fanIn = step.calls.some((call) => call.fanInGraceMs !== undefined) ? new FanIn() : undefined;
    for (const { index, resume } of toRun) {
      const running = this.#runCall(
        turn,
        step.calls[index] as ToolCall,
        conversation,
        decisionContext,
        resume,
        fanIn,
      );
      if (!isPromiseLike(running)) {
        const reply = this.#settleCall(turn, step, index, running);
        if (reply) ready.push(reply);
        continue;
      }
      waiting.push(
        running.then((outcome) => {
          const reply = this.#settleCall(turn, step, index, outcome);
          return reply ? this.write(turn, [reply]) : undefined;
        }),
      );
    }
    if (ready.length > 0) yield* settled(this.write(turn, ready));
    if (waiting.length === 0) return;
    try {
      yield Promise.all(waiting);
    } catch (error) {
      // A failed write ends the turn: the siblings still running are stopped rather than left behind.
      turn.runtime.control.abortAgents(error);
      throw error;
    }
  }

  #conversation(turn: TurnState, hop: number): Conversation {
    return {
      sessionId: turn.sessionId,
      turnId: turn.turnId,
      messages: turn.messages,
      turnStart: turn.turnStart,
      hop,
      agents: this.#parts.orchestrator.agents,
      lastResults: turn.lastResults,
      recorder: turn.recorder,
      limits: turn.limits,
    };
  }

  #runCall(
    turn: TurnState,
    call: ToolCall,
    conversation: Conversation,
    decisionContext: ReturnType<typeof otelContext.active>,
    resume: AgentResume | undefined,
    fanIn?: FanIn,
  ) {
    const agent = this.#parts.agents.get(call.toolName) as Agent;
    const timeoutMs = agent.timeoutMs ?? this.#parts.options.agentTimeoutMs;
    const correlationId = turn.steps[turn.steps.length - 1]?.annotations?.correlationId;
    const checks = this.#parts.guards.forAgent('toolOutput', agent.name);
    const { requestContext } = turn.runtime;
    const { limits } = turn;
    return runAgentCall({
      retry:
        limits && limits.agentRetries > 0
          ? {
              retries: limits.agentRetries,
              baseDelayMs: limits.retryBaseDelayMs,
              maxDelayMs: limits.retryMaxDelayMs,
            }
          : undefined,
      correlationId,
      checkReply:
        checks.length === 0
          ? undefined
          : (content: string) => Guards.run(checks, 'toolOutput', content, requestContext, agent.name),
      resume,
      agent,
      call,
      conversation,
      request: turn.runtime.requestContext,
      parent: decisionContext,
      timeoutMs: call.timeoutMs === undefined ? timeoutMs : Math.min(timeoutMs, call.timeoutMs),
      control: turn.runtime.control,
      emit: turn.runtime.emit,
      exposeErrorDetails: this.#parts.options.exposeErrorDetails,
      fanIn,
      metrics: this.#parts.metrics,
    });
  }
}

/** The state of one step's calls while they run. */
interface StepRun {
  readonly calls: readonly ToolCall[];
  /** The replies, by call index. */
  readonly results: Array<ToolMessage | undefined>;
  /** Set when any call waits for a person. */
  paused: boolean;
  readonly stepCalls: StepCall[] | undefined;
}

/**
 * Adds an agent's tokens to the turn and to its current step. The step is
 * replaced, not changed: a store may keep the step objects it was given.
 */
function countUsage(turn: TurnState, usage: TokenUsage): void {
  turn.usage = addUsage(turn.usage, usage);
  const last = turn.steps.length - 1;
  const step = turn.steps[last];
  if (step) turn.steps[last] = { ...step, usage: addUsage(step.usage, usage) };
}

/**
 * Puts an orchestrator agent's inner steps under its call in the turn's
 * steps (the current step is replaced, not changed, as in {@link countUsage}).
 */
function nestSteps(turn: TurnState, toolCallId: string, innerSteps: InnerStep[]): void {
  const last = turn.steps.length - 1;
  const step = turn.steps[last];
  const index = step ? step.calls.findIndex((call) => call.toolCallId === toolCallId) : -1;
  if (!step || index < 0) return;
  const calls = [...step.calls];
  calls[index] = { ...(calls[index] as StepCall), innerSteps };
  turn.steps[last] = { ...step, calls };
}

/** Adds a step to the turn and emits it as a `route` event. */
function addStep(turn: TurnState, step: RouteStep): void {
  turn.steps.push(step);
  turn.runtime.emit?.({
    type: 'route',
    sessionId: turn.sessionId,
    turnId: turn.turnId,
    messageId: createId('evt'),
    step,
    endOfMessage: true,
  });
}

/** The error reply of a call a `toolInput` guardrail blocked: the agent never ran. */
function blockedReply(call: ToolCall, error: GuardrailBlockedError): ToolMessage {
  return {
    id: createId('msg'),
    role: 'tool',
    name: call.toolName,
    toolCallId: call.id,
    content: `Agent '${call.toolName}' was not called: blocked by guardrail '${error.guard}' (${error.reason})`,
    status: 'error',
    createdAt: isoNow(),
    metadata: { errorCode: error.code, guard: error.guard },
  };
}

/**
 * What the user reads when a turn stops at a limit: the latest good reply of
 * each agent this turn (three at most), after a note saying why it stopped.
 */
function partialAnswer(turn: TurnState, error: Error): string {
  const why = TurnDeadlineError.isInstance(error)
    ? `I ran out of time after ${duration((error as TurnDeadlineError).timeoutMs)}`
    : `I reached the limit of ${turn.limits?.maxHops ?? turn.hop} steps`;
  const latest = new Map<string, string>();
  for (const message of turn.turnMessages()) {
    if (message.role === 'tool' && message.status === 'ok' && message.content.trim() !== '') {
      latest.delete(message.name);
      latest.set(message.name, message.content.trim());
    }
  }
  const found = [...latest].slice(-3);
  if (found.length === 0)
    return `${why} before any result came in. Please try again, or ask for less at once.`;
  const parts = found.map(([agent, content]) => (found.length === 1 ? content : `${agent}: ${content}`));
  return `${why}, so this may be incomplete. What I have so far:\n\n${parts.join('\n\n')}`;
}

/** `1.5 s`, `300 ms`, `2 min`. */
function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000) return `${Math.round(ms / 100) / 10} s`;
  return `${Math.round(ms / 60_000)} min`;
}

function addApprovals(turn: TurnState, approvals: ApprovalRecord[]): void {
  if (turn.approvals) turn.approvals.push(...approvals);
  else turn.approvals = approvals;
}

function noop(): void {}

/** A store failure after the turn wrote: the write may have been stored even though its reply was lost. */
function outcomeOf(turn: TurnState, error: unknown): unknown {
  if (!StoreUnavailableError.isInstance(error) || !turn.wrote) return error;
  if ((error as StoreUnavailableError).outcome === 'unknown') return error;
  return new StoreUnavailableError({
    message: (error as Error).message,
    cause: error,
    outcome: 'unknown',
    turnId: turn.turnId,
  });
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

function turnEnd(turn: TurnState) {
  return {
    type: 'turn-end' as const,
    sessionId: turn.sessionId,
    turnId: turn.turnId,
    messageId: createId('evt'),
    status: turn.status,
    traceId: turn.traceId,
    endOfMessage: true,
    endOfDialog: true,
  };
}

function pendingSummary(turn: TurnState): string {
  const pending = pendingApprovals(turn);
  return `awaiting approval: ${pending.map((approval) => `${approval.agent} (${approval.id})`).join(', ')}`;
}
