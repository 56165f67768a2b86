import type { MessageItem } from '@switchboard/core';
import { isPromiseLike } from '../promise-like.js';
import type { TurnState } from './turn-state.js';

/**
 * How a turn's writes are batched, so that a single-hop turn waits for the
 * store once after its agent replied (on Redis: the opening, then one last
 * write that also releases the lease). Two devices, both kept on the turn:
 *
 * - a *deferred* write is sent at once but not waited for; the next write,
 *   or {@link takeUnconfirmed} before an agent runs, waits for it too. The
 *   store's lease check keeps such writes safe, and they reach the store in
 *   the order they were made;
 * - *held* messages (an agent's reply) wait to go with the turn's next
 *   write, in the same call, or are sent deferred on the next turn of the
 *   event loop should nothing write first.
 *
 * Only `turn-machine.ts` sends writes; these functions keep the books.
 */

/** What a write of `messages` sends: the held messages first (they are taken off the turn), then `messages`. */
export function withHeld(turn: TurnState, messages: readonly MessageItem[]): readonly MessageItem[] {
  const { held } = turn;
  if (!held) return messages;
  clearImmediate(turn.heldFlush);
  turn.held = undefined;
  turn.heldFlush = undefined;
  return messages.length === 0 ? held : [...held, ...messages];
}

/**
 * What the writer waits for once `written` was sent: the earlier deferred
 * writes and this one, or (`deferred`) nothing now, this one being kept on
 * the turn to wait for later.
 */
export function afterSend(
  turn: TurnState,
  written: void | Promise<void>,
  deferred: boolean,
): void | Promise<void> {
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
 * Keeps `messages` to go with the turn's next write; `flush(turn)` sends
 * them on the next turn of the event loop unless a write took them first.
 * The orchestrator sees them at once.
 */
export function holdBack(
  turn: TurnState,
  messages: readonly MessageItem[],
  flush: (turn: TurnState) => void,
): void {
  for (const message of messages) if (message.role !== 'assistant') turn.messages.push(message);
  if (turn.held) turn.held.push(...messages);
  else turn.held = [...messages];
  turn.heldFlush ??= setImmediate(flush, turn);
}

/** Stops waiting to flush the held messages; true when there are any to send. */
export function takeFlush(turn: TurnState): boolean {
  clearImmediate(turn.heldFlush);
  turn.heldFlush = undefined;
  return turn.held !== undefined;
}

/** Keeps a write that failed before it was sent, for the turn's next write or confirm to report. */
export function sendFailed(turn: TurnState, error: unknown): void {
  const failed = Promise.reject(error);
  failed.then(undefined, noop);
  turn.unconfirmed = failed;
}

/** The turn's writes not yet waited for, taken off the turn: the caller waits for them. */
export function takeUnconfirmed(turn: TurnState): Promise<void> | undefined {
  const pending = turn.unconfirmed;
  turn.unconfirmed = undefined;
  return pending;
}

function noop(): void {}
