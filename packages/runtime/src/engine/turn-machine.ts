import type { MessageItem, UserMessage } from '@switchboard/core';
import { isPromiseLike } from '../promise-like.js';
import type { AppendOptions, OpenedTurn, RequestKey } from '../stores/session-store.js';
import { type FinishedTurnStatus, type TurnStatus, transition } from '../turns/turn-record.js';
import { type Steps, settled } from './steps.js';
import type { TurnState } from './turn-state.js';
import { afterSend, holdBack, sendFailed, takeFlush, takeUnconfirmed, withHeld } from './write-batching.js';

/**
 * The turn as a state machine. Its states and `transition()` are in
 * `turns/turn-record.ts` (they are stored); this file holds what the engine
 * does with them: the {@link NextStep} a hop of the loop ends with, the one
 * status change ({@link moveTo}) and the store writes ({@link open},
 * {@link commit}, and {@link hold} / {@link confirmWrites}, which batch
 * commits as `write-batching.ts` says).
 */

/** How a turn (or the part of it this process runs) ended: its status, the answer, and why. */
export interface Ending {
  status: FinishedTurnStatus;
  reply: string;
  error?: Error;
  /** The answer message's `toolCallId`. */
  toolCallId: string;
}

/** The loop decides again. */
export const RUN_AGAIN: { readonly status: 'running' } = { status: 'running' };

/** The turn waits for a person (its approvals are on the turn). */
export const PAUSE: { readonly status: 'awaiting_approval' } = { status: 'awaiting_approval' };

/**
 * What follows a hop of the loop, named by the state the turn goes to:
 * decide again, pause for approval, or end.
 */
export type NextStep = typeof RUN_AGAIN | typeof PAUSE | Ending;

/** How the part of a turn this process runs stops: paused, or ended. */
export type Outcome = Exclude<NextStep, typeof RUN_AGAIN>;

/** The one status change: moves the turn to `to`, as `transition()` allows. */
export function moveTo(turn: TurnState, to: TurnStatus): void {
  turn.status = transition(turn.status, to);
}

/**
 * The turn's first write: its user message and its record (`running`), in
 * one atomic step that first finds the session's previous turn ended and
 * the request key unused. Returns the window ending with the user message.
 */
export function open(
  turn: TurnState,
  userMessage: UserMessage,
  limit: number,
  requestKey: RequestKey | undefined,
): OpenedTurn | Promise<OpenedTurn> {
  const { sessions, lease, idleTtlMs } = turn.runtime;
  const opening = sessions.openTurn(turn.sessionId, userMessage, {
    turn: turn.snapshot(),
    limit,
    lease,
    requestKey,
    idleTtlMs,
  });
  turn.wrote = true;
  turn.storeAnswersAtOnce = !isPromiseLike(opening);
  return opening;
}

/**
 * Every later write of a turn: messages (the user message excepted, which
 * {@link open} stores) together with the turn's record as it now stands.
 * Nothing is written once the turn lost its lease; once it was stopped,
 * only its closing write (`closing`) is.
 *
 * A `deferred` write is sent at once but not waited for (see
 * `write-batching.ts`). The `last` write of the part of the turn this
 * process runs may release the lease in the same round trip, when the
 * runtime says so (`releaseWithLastWrite`). Messages {@link hold | held}
 * until now go first, in the same call.
 */
export function commit(
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
  const sending = withHeld(turn, messages);
  const written = turn.runtime.sessions.append(turn.sessionId, sending, options);
  // What the orchestrator sees next is the history as stored (a fan-out's replies in the order they came).
  for (const message of messages) if (message.role !== 'assistant') turn.messages.push(message);
  return afterSend(turn, written, deferred);
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
export function hold(turn: TurnState, messages: readonly MessageItem[]): void {
  // As `commit`: nothing once the turn lost its lease, and a stopped turn keeps only its closing write.
  const { control } = turn.runtime;
  if (control.stopped !== undefined) {
    if (control.leaseLost) throw control.stopped;
    return;
  }
  // A store that answers at once (in memory) gains nothing from one call instead of two.
  if (turn.storeAnswersAtOnce) {
    commit(turn, messages, { deferred: true });
    return;
  }
  holdBack(turn, messages, sendHeld);
}

/** Waits for the turn's deferred (and held) writes: before an agent runs, the store must have what came before. */
export function* confirmWrites(turn: TurnState): Steps<void> {
  if (turn.held) sendHeld(turn);
  const pending = takeUnconfirmed(turn);
  if (pending) yield* settled(pending);
}

/** Sends the held messages now, without waiting; a failure waits for the turn's next write or confirm. */
function sendHeld(turn: TurnState): void {
  if (!takeFlush(turn)) return;
  try {
    commit(turn, [], { deferred: true });
  } catch (error) {
    sendFailed(turn, error);
  }
}
