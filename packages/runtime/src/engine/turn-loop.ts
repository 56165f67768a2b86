import { context as otelContext } from '@opentelemetry/api';
import {
  type Conversation,
  type Decision,
  isErrorMessage,
  isRouteToUser,
  MaxHopsExceededError,
  OrchestratorError,
  type ToolCall,
  TurnDeadlineError,
  validateDecision,
} from '@switchboard/core';
import { isPromiseLike } from '../promise-like.js';
import { runCalls } from './call-execution.js';
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
import { type NextStep, type Outcome, PAUSE } from './turn-machine.js';
import type { TurnState } from './turn-state.js';
import { abandon, decided, decisionContextOf, endDecision, startDecision } from './turn-telemetry.js';
import type { TurnResult } from './turn-types.js';

/**
 * Runs a turn that holds its session's lease, from where it stands to its
 * end or its next pause: decide → resolve → run → repeat. Each hop ends
 * with a {@link NextStep}; what the steps mean lives elsewhere: resolving a
 * decision in `decision-resolution.ts`, running calls in
 * `call-execution.ts`, the end in `turn-ending.ts`, every store write in
 * `turn-machine.ts`, every span, metric and event in `turn-telemetry.ts`.
 */
export class TurnLoop {
  readonly #parts: LoopParts;
  readonly #candidateNames: readonly string[];

  constructor(parts: LoopParts) {
    this.#parts = parts;
    this.#candidateNames = parts.orchestrator.agents.map((agent) => agent.name);
  }

  /** Runs the turn from where it stands to its end or its next pause, and stores how it ended. */
  *drive(turn: TurnState): Steps<TurnResult> {
    const parts = this.#parts;
    let outcome: Outcome;
    // The profile's deadline counts this part of the turn (not the time it waited for a person).
    const timeoutMs = turn.limits?.turnTimeoutMs;
    const deadline =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => turn.runtime.control.stop(new TurnDeadlineError({ timeoutMs })), timeoutMs);
    try {
      outcome = yield* this.#run(turn);
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

  *#run(turn: TurnState): Steps<Outcome> {
    const parts = this.#parts;
    const { orchestrator, options } = parts;
    const { control } = turn.runtime;
    const turnContext = turn.turnContext ?? otelContext.active();

    // A resumed turn first finishes what its last stored step left: the answer that waited, the calls without a reply.
    if (turn.answerApprovalId !== undefined) return approvedAnswer(parts, turn);
    if (turn.unanswered.length > 0) {
      const calls = turn.unanswered;
      turn.unanswered = [];
      const conversation = this.#conversation(turn, Math.max(0, turn.hop - 1));
      if ((yield* runCalls(parts, turn, calls, conversation, turnContext)) === PAUSE) return PAUSE;
      if (turn.unansweredStep) turn.lastResults = turn.repliesTo(turn.unansweredStep);
    }

    for (;;) {
      if (control.stopped !== undefined) return stopped(parts, turn);
      const maxHops = turn.limits?.maxHops ?? options.maxHops;
      if (turn.hop >= maxHops) return limit(parts, turn, new MaxHopsExceededError({ maxHops }));
      const hop = turn.hop++;
      const { recorder } = turn;
      recorder.hop = hop;
      const conversation = this.#conversation(turn, hop);

      // Decide.
      const decisionSpan = startDecision(parts, turnContext, hop, this.#candidateNames);
      const decisionContext = decisionContextOf(turnContext, decisionSpan);
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

      // Resolve: agents' tasks are checked before they are recorded or run (a rewrite is what is stored and sent).
      if (parts.guards.checksToolInput && !isErrorMessage(decision))
        decision = yield* checkCalls(parts, turn, decision);
      decision = applyRules(parts, turn, decision);
      const step = toRouteStep(hop, decision, startedAt, options.exposeErrorDetails);
      decided(decisionSpan, decision, recorder, step.durationMs);

      // Run.
      let next: NextStep;
      try {
        if (control.stopped !== undefined) return stopped(parts, turn);
        recordStep(turn, step);
        if (isErrorMessage(decision)) next = failedBy(parts, turn, decision);
        else {
          const calls = Array.isArray(decision) ? decision : [decision];
          const first = calls[0] as ToolCall;
          next = isRouteToUser(first)
            ? answerOrPause(parts, turn, first, step)
            : yield* runCalls(parts, turn, calls, conversation, decisionContext, step.calls);
        }
      } finally {
        endDecision(decisionSpan);
      }
      // Repeat, or stop here.
      if (next.status !== 'running') return next;
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
}
