import { type Context, context as otelContext } from '@opentelemetry/api';
import {
  type Conversation,
  type Decision,
  type ErrorMessage,
  isErrorMessage,
  isRouteToUser,
  MaxHopsExceededError,
  type Orchestrator,
  OrchestratorError,
  type ToolCall,
  TurnDeadlineError,
} from '@switchboard/core';
import { validateDecision } from '@switchboard/core/internal';
import { isPromiseLike } from '../promise-like.js';
import type { RouteStep } from '../turns/turn-record.js';
import { runCalls, traceUserOf } from './call-execution.js';
import {
  answerOrPause,
  applyRules,
  approvedAnswer,
  checkCalls,
  failedBy,
  recordStep,
} from './decision-resolution.js';
import { directDecision } from './direct-call.js';
import type { LoopParts } from './loop-parts.js';
import { toRouteStep } from './route-step.js';
import type { Steps } from './steps.js';
import { finish, limit, outcomeOf, stopped } from './turn-ending.js';
import type { Ending, NextStep, Outcome } from './turn-machine.js';
import type { DecisionNotes, TurnState } from './turn-state.js';
import { abandon, decided, decisionContextOf, endDecision, startDecision } from './turn-telemetry.js';
import type { TurnResult } from './turn-types.js';

/** Where a turn of the loop stands: its decisions so far, and what its orchestrator records during one. */
export interface LoopTurn {
  hop: number;
  readonly recorder: DecisionNotes;
}

/**
 * What {@link hops} needs from whoever runs it: the app's turns
 * ({@link TurnLoop}) or an orchestrator agent's nested turn. Each step of a
 * hop that differs between them is a method; a method may throw to end the
 * loop (a nested turn throws its failures).
 */
export interface LoopHost<T extends LoopTurn> {
  readonly orchestrator: Orchestrator;
  /** The agent names the decision span lists. */
  readonly candidates: readonly string[];
  /** Keep errors' own text in the steps. */
  readonly exposeErrorDetails: boolean;
  /** When set, the calls of every decision go through it before they are recorded (the `toolInput` guardrails). */
  readonly checkCalls?: (turn: T, decision: ToolCall | ToolCall[]) => Steps<ToolCall | ToolCall[]>;
  /** The most decisions of the turn. */
  maxHops(turn: T): number;
  /** How a stopped turn ends (or a throw); undefined while it may go on. */
  stopped(turn: T): Ending | undefined;
  /** How a turn that made `maxHops` decisions without an answer ends. */
  limit(turn: T, maxHops: number): Outcome;
  /** What the orchestrator sees at decision `hop`. */
  conversation(turn: T, hop: number): Conversation;
  /** The session and user of the decision spans, when they are not the current request's. */
  owner?(turn: T): { sessionId: string; userId?: string } | undefined;
  /** The decision the request made itself (a direct call), instead of asking the orchestrator. */
  direct(turn: T, conversation: Conversation): Decision | undefined;
  /** The decision as the turn's rules let it stand (profiles, fan-out). */
  applyRules(turn: T, decision: Decision): Decision;
  /** Records the decision's step (after the notes the orchestrator made). */
  record(turn: T, step: RouteStep): void;
  /** What follows an `ErrorMessage` decision. */
  failed(turn: T, decision: ErrorMessage): NextStep;
  /** What follows an answer (`route_to_user`). */
  answer(turn: T, answer: ToolCall, step: RouteStep): NextStep;
  /** Runs a decision's calls; what follows them. */
  run(
    turn: T,
    calls: readonly ToolCall[],
    conversation: Conversation,
    decisionContext: Context,
    step: RouteStep,
  ): Steps<NextStep>;
}

/**
 * The loop: decide → resolve → run → repeat, until a hop's {@link NextStep}
 * is not to decide again. What each step means is the host's (see
 * {@link LoopHost}); spans come from `turn-telemetry.ts`.
 */
export function* hops<T extends LoopTurn>(host: LoopHost<T>, turn: T, turnContext: Context): Steps<Outcome> {
  const { orchestrator } = host;
  for (;;) {
    const stop = host.stopped(turn);
    if (stop) return stop;
    const maxHops = host.maxHops(turn);
    if (turn.hop >= maxHops) return host.limit(turn, maxHops);
    const hop = turn.hop++;
    const { recorder } = turn;
    recorder.hop = hop;
    const conversation = host.conversation(turn, hop);

    // Decide.
    const decisionSpan = startDecision(
      orchestrator.name,
      turnContext,
      hop,
      host.candidates,
      host.owner?.(turn),
    );
    const decisionContext = decisionContextOf(turnContext, decisionSpan);
    const startedAt = performance.now();
    let decision: Decision;
    try {
      const pending =
        host.direct(turn, conversation) ??
        (decisionContext === turnContext
          ? orchestrator.decide(conversation)
          : otelContext.with(decisionContext, orchestrator.decide, orchestrator, conversation));
      // Not raced against a stop: the orchestrator gets the turn's signal (RequestContext.signal) to give up
      // its own work, and the stop is noticed as soon as it answers. Racing cost two promises per decision.
      decision = validateDecision(isPromiseLike(pending) ? yield pending : pending, conversation.agents);
    } catch (error) {
      // A hand-written `Orchestrator` may throw or reject: the turn ends with that error, not a crash.
      decision = { error: new OrchestratorError({ orchestrator: orchestrator.name, cause: error }) };
    }

    // Resolve: agents' tasks are checked before they are recorded or run (a rewrite is what is stored and sent).
    if (host.checkCalls && !isErrorMessage(decision)) decision = yield* host.checkCalls(turn, decision);
    decision = host.applyRules(turn, decision);
    const step = toRouteStep(hop, decision, startedAt, host.exposeErrorDetails);
    decided(decisionSpan, decision, recorder, step.durationMs);

    // Run.
    let next: NextStep;
    try {
      const stop = host.stopped(turn);
      if (stop) return stop;
      host.record(turn, step);
      if (isErrorMessage(decision)) next = host.failed(turn, decision);
      else {
        const calls = Array.isArray(decision) ? decision : [decision];
        const first = calls[0] as ToolCall;
        next = isRouteToUser(first)
          ? host.answer(turn, first, step)
          : yield* host.run(turn, calls, conversation, decisionContext, step);
      }
    } finally {
      endDecision(decisionSpan);
    }
    // Repeat, or stop here.
    if (next.status !== 'running') return next;
  }
}

/**
 * Runs an app's turn that holds its session's lease, from where it stands
 * to its end or its next pause, through {@link hops}. The steps of a hop
 * live elsewhere: resolving a decision in `decision-resolution.ts`, running
 * calls in `call-execution.ts`, the end in `turn-ending.ts`, every store
 * write in `turn-machine.ts`, every span, metric and event in `turn-telemetry.ts`.
 */
export class TurnLoop implements LoopHost<TurnState> {
  readonly #parts: LoopParts;
  readonly orchestrator: Orchestrator;
  readonly candidates: readonly string[];
  readonly exposeErrorDetails: boolean;
  readonly checkCalls?: LoopHost<TurnState>['checkCalls'];

  constructor(parts: LoopParts) {
    this.#parts = parts;
    this.orchestrator = parts.orchestrator;
    this.candidates = parts.orchestrator.agents.map((agent) => agent.name);
    this.exposeErrorDetails = parts.options.exposeErrorDetails;
    if (parts.guards.checksToolInput) this.checkCalls = (turn, decision) => checkCalls(parts, turn, decision);
  }

  /** A part continued by another user's request keeps the requester as its decisions' user. */
  owner(turn: TurnState): { sessionId: string; userId?: string } | undefined {
    const userId = traceUserOf(turn);
    return userId === undefined ? undefined : { sessionId: turn.sessionId, userId };
  }

  /** Runs the turn from where it stands to its end or its next pause, and stores how it ended. */
  *drive(turn: TurnState): Steps<TurnResult> {
    const parts = this.#parts;
    let outcome: Outcome | undefined;
    // The profile's deadline counts this part of the turn (not the time it waited for a person).
    const timeoutMs = turn.limits?.turnTimeoutMs;
    const deadline =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => turn.runtime.control.stop(new TurnDeadlineError({ timeoutMs })), timeoutMs);
    // With budgets, this part's model calls are metered (no store call here).
    parts.budgets?.attach(turn.runtime.requestContext, turn.usage, (error) =>
      turn.runtime.control.stop(error),
    );
    try {
      const turnContext = turn.turnContext ?? otelContext.active();
      if (turn.answerApprovalId !== undefined || turn.unanswered.length > 0)
        outcome = yield* this.#finishStoredStep(turn, turnContext);
      outcome ??= yield* hops(this, turn, turnContext);
      clearTimeout(deadline);
    } catch (error) {
      clearTimeout(deadline);
      abandon(parts, turn, error);
      throw outcomeOf(turn, error);
    }
    try {
      return yield* finish(parts, turn, outcome);
    } catch (error) {
      // The last write (and any reply sent before it without waiting) may have been stored.
      throw outcomeOf(turn, error);
    }
  }

  /**
   * A resumed turn first finishes what its last stored step left: the answer
   * that waited for a person, or the calls without a reply. Undefined when
   * the loop goes on.
   */
  *#finishStoredStep(turn: TurnState, turnContext: Context): Steps<Outcome | undefined> {
    if (turn.answerApprovalId !== undefined) return approvedAnswer(this.#parts, turn);
    const calls = turn.unanswered;
    turn.unanswered = [];
    const conversation = this.conversation(turn, Math.max(0, turn.hop - 1));
    const next = yield* runCalls(this.#parts, turn, calls, conversation, turnContext);
    if (next.status === 'awaiting_approval') return next;
    if (turn.unansweredStep) turn.lastResults = turn.repliesTo(turn.unansweredStep);
    return undefined;
  }

  maxHops(turn: TurnState): number {
    return turn.limits?.maxHops ?? this.#parts.options.maxHops;
  }

  stopped(turn: TurnState): Ending | undefined {
    return turn.runtime.control.stopped === undefined ? undefined : stopped(this.#parts, turn);
  }

  limit(turn: TurnState, maxHops: number): Outcome {
    return limit(this.#parts, turn, new MaxHopsExceededError({ maxHops }));
  }

  conversation(turn: TurnState, hop: number): Conversation {
    return {
      sessionId: turn.sessionId,
      turnId: turn.turnId,
      messages: turn.messages,
      turnStart: turn.turnStart,
      hop,
      agents: this.orchestrator.agents,
      lastResults: turn.lastResults,
      recorder: turn.recorder,
      limits: turn.limits,
      steps: turn.steps,
    };
  }

  direct(turn: TurnState, conversation: Conversation): Decision | undefined {
    return turn.direct === undefined ? undefined : directDecision(turn.direct, conversation);
  }

  applyRules(turn: TurnState, decision: Decision): Decision {
    return applyRules(this.#parts, turn, decision);
  }

  record(turn: TurnState, step: RouteStep): void {
    recordStep(turn, step);
  }

  failed(turn: TurnState, decision: ErrorMessage): NextStep {
    return failedBy(this.#parts, turn, decision);
  }

  answer(turn: TurnState, answer: ToolCall, step: RouteStep): NextStep {
    return answerOrPause(this.#parts, turn, answer, step);
  }

  run(
    turn: TurnState,
    calls: readonly ToolCall[],
    conversation: Conversation,
    decisionContext: Context,
    step: RouteStep,
  ): Steps<NextStep> {
    return runCalls(this.#parts, turn, calls, conversation, decisionContext, step.calls);
  }
}
