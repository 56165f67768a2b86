import { type AssistantMessage, createId, StoreUnavailableError, TurnDeadlineError } from '@switchboard/core';
import { BudgetExceededError } from '../budgets/budget-errors.js';
import type { GuardStage } from '../guardrails/guardrail.js';
import { isPromiseLike } from '../promise-like.js';
import { pendingApprovals } from '../turns/turn-record.js';
import { withdraw } from './approvals.js';
import { addNote, noteBlock, noteRewrites } from './decision-resolution.js';
import { type GuardOutcome, Guards } from './guards.js';
import type { LoopParts } from './loop-parts.js';
import { errorCode } from './route-step.js';
import { type Steps, settled } from './steps.js';
import { isoNow } from './timestamp.js';
import { commit, type Ending, moveTo, type Outcome } from './turn-machine.js';
import { resultOf } from './turn-result.js';
import type { TurnState } from './turn-state.js';
import { asError, countEnd, emitEnd, emitPause, endPart, logFailure } from './turn-telemetry.js';
import type { TurnResult } from './turn-types.js';

/**
 * How the part of a turn this process runs ends: paused (its record goes to
 * `awaiting_approval`) or ended (the output guardrails check the answer,
 * pending approvals are withdrawn, the answer is the closing write). Either
 * way the turn's span ends and its last events go out.
 */

/** Stores the end (or the pause) of the turn, ends its span, and emits its last events. */
export function* finish(parts: LoopParts, turn: TurnState, ending: Outcome): Steps<TurnResult> {
  if (ending.status === 'awaiting_approval') {
    moveTo(turn, 'awaiting_approval');
    countEnd(parts, turn);
    try {
      yield* settled(commit(turn, [], { last: true }));
    } finally {
      endPart(parts, turn, { output: pendingSummary(turn), status: turn.status });
    }
    const pending = pendingApprovals(turn);
    emitPause(turn, pending);
    return resultOf(turn, parts.options.approvalMessage, pending);
  }

  let outcome: Ending = ending;
  const { guards } = parts;
  if (
    outcome.status === 'completed' &&
    guards.output.length > 0 &&
    turn.runtime.control.stopped === undefined
  ) {
    const checked = yield* settled(
      Guards.run(guards.output, 'output', outcome.reply, turn.runtime.requestContext),
    );
    if (checked.block) {
      noteBlock(turn, 'output', checked.block);
      outcome = blocked(parts, turn, checked.block);
    } else if (checked.rewrites) {
      noteRewrites(turn, 'output', checked.rewrites);
      outcome = { ...outcome, reply: checked.text };
    }
  }
  moveTo(turn, outcome.status);
  turn.endedAt = isoNow();
  countEnd(parts, turn);
  if (turn.approvals) {
    for (const approval of pendingApprovals(turn)) {
      withdraw(approval, `the turn ended (${outcome.status}) before a decision`);
    }
  }
  if (outcome.error) {
    const message = parts.options.exposeErrorDetails ? outcome.error.message : outcome.reply;
    turn.error = { code: errorCode(outcome.error), message };
    // A blocked turn is logged too (a warning): operators see what was refused and, for a check that broke, why.
    if (outcome.status === 'failed' || outcome.status === 'blocked') logFailure(parts, turn, outcome.error);
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
    // Inline rather than `yield* settled(…)`: one generator fewer on every turn.
    const written = commit(turn, [answer], { closing: true, last: true });
    if (isPromiseLike(written)) yield written;
  } finally {
    endPart(parts, turn, { output: outcome.reply, error: outcome.error, status: turn.status });
  }
  emitEnd(turn, answer.id, outcome.reply);
  return resultOf(turn, outcome.reply);
}

/** Ends a turn a guardrail blocked (its message, or its answer): state `blocked`, the guardrail's reply. */
export function* block(
  parts: LoopParts,
  turn: TurnState,
  stage: GuardStage,
  refusal: NonNullable<GuardOutcome['block']>,
): Steps<TurnResult> {
  noteBlock(turn, stage, refusal);
  return yield* finish(parts, turn, blocked(parts, turn, refusal));
}

/** Ends a stored turn without running it further (cancelled, or abandoned with `recovery: 'fail'`). */
export function closing(
  parts: LoopParts,
  turn: TurnState,
  status: 'interrupted' | 'failed',
  error: Error,
): Ending {
  const { interruptedMessage, failureMessage } = parts.options;
  return {
    status,
    reply: status === 'interrupted' ? interruptedMessage : failureMessage,
    error,
    toolCallId: `${status === 'interrupted' ? 'interrupt' : 'error'}_${turn.turnId}`,
  };
}

/** The outcome of a stopped turn: interrupted, or (lease lost) a throw, since it may store nothing more. */
export function stopped(parts: LoopParts, turn: TurnState): Ending {
  const { control } = turn.runtime;
  if (control.leaseLost) throw control.stopped;
  if (TurnDeadlineError.isInstance(control.stopped)) return limit(parts, turn, control.stopped as Error);
  if (BudgetExceededError.isInstance(control.stopped))
    return overBudget(turn, control.stopped as BudgetExceededError);
  return {
    status: 'interrupted',
    reply: parts.options.interruptedMessage,
    error: asError(control.stopped),
    toolCallId: `interrupt_${turn.turnId}`,
  };
}

/**
 * The end of a turn that hit a limit (its hops, its deadline): with a
 * profile whose `onLimit` is `partial`, a `limited` turn answering with the
 * best result it had, with a note; a `failed` one with the app's failure
 * message otherwise. The error (its code) says which limit.
 */
export function limit(parts: LoopParts, turn: TurnState, error: Error): Ending {
  const partial = turn.limits?.onLimit === 'partial';
  return {
    status: partial ? 'limited' : 'failed',
    reply: partial ? partialAnswer(turn, error) : parts.options.failureMessage,
    error,
    toolCallId: `limit_${turn.turnId}`,
  };
}

/**
 * The end of a turn whose next model call could have passed a spending
 * budget (the call was not made): `budget_exceeded`, answering with the
 * best result it had; a `budget` note step and the turn span's
 * `switchboard.budget.exceeded` attribute say which limit.
 */
export function overBudget(turn: TurnState, error: BudgetExceededError): Ending {
  const { scope, limit: name, max, used, requested } = error;
  addNote(turn, 'budget', { scope, limit: name, max, used, requested });
  turn.span?.setAttribute('switchboard.budget.exceeded', `${scope}.${name}`);
  return {
    status: 'budget_exceeded',
    reply: partialAnswer(turn, error),
    error,
    toolCallId: `budget_${turn.turnId}`,
  };
}

/** A store failure after the turn wrote: the write may have been stored even though its reply was lost. */
export function outcomeOf(turn: TurnState, error: unknown): unknown {
  if (!StoreUnavailableError.isInstance(error) || !turn.wrote) return error;
  if ((error as StoreUnavailableError).outcome === 'unknown') return error;
  return new StoreUnavailableError({
    message: (error as Error).message,
    cause: error,
    outcome: 'unknown',
    turnId: turn.turnId,
  });
}

function blocked(parts: LoopParts, turn: TurnState, refusal: NonNullable<GuardOutcome['block']>): Ending {
  return {
    status: 'blocked',
    reply: refusal.message ?? parts.options.blockedMessage,
    error: refusal.error,
    toolCallId: `blocked_${turn.turnId}`,
  };
}

/**
 * What the user reads when a turn stops at a limit: the latest good reply of
 * each agent this turn (three at most), after a note saying why it stopped.
 */
function partialAnswer(turn: TurnState, error: Error): string {
  const why = TurnDeadlineError.isInstance(error)
    ? `I ran out of time after ${duration((error as TurnDeadlineError).timeoutMs)}`
    : BudgetExceededError.isInstance(error)
      ? `I reached the spending limit for this ${SCOPE_WORDS[(error as BudgetExceededError).scope]}`
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
    return BudgetExceededError.isInstance(error)
      ? `${why} before any result came in.`
      : `${why} before any result came in. Please try again, or ask for less at once.`;
  const parts = found.map(([agent, content]) => (found.length === 1 ? content : `${agent}: ${content}`));
  return `${why}, so this may be incomplete. What I have so far:\n\n${parts.join('\n\n')}`;
}

const SCOPE_WORDS: Readonly<Record<BudgetExceededError['scope'], string>> = {
  turn: 'request',
  session: 'conversation',
  'tenant-day': 'day',
  'tenant-month': 'month',
};

/** `1.5 s`, `300 ms`, `2 min`. */
function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000) return `${Math.round(ms / 100) / 10} s`;
  return `${Math.round(ms / 60_000)} min`;
}

function pendingSummary(turn: TurnState): string {
  const pending = pendingApprovals(turn);
  return `awaiting approval: ${pending.map((approval) => `${approval.agent} (${approval.id})`).join(', ')}`;
}
