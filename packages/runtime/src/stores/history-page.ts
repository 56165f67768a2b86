import type { MessageItem } from '@switchboard/core';
import type { HistoryPage, ReadPageOptions, TurnRecord } from './session-store.js';

/**
 * The arithmetic of history pages, shared by every store. Messages and turns
 * are append-only and a turn starts with its user message (`openTurn` stores
 * both at once), so a page of messages `[start, stop)` belongs to a run of
 * consecutive turns: the turn of its last message, one earlier turn per user
 * message on the page, and the turn its first message belongs to when the
 * page starts inside a turn. A cursor carries the turn of the message before
 * it, so an older page finds its turns without reading anything newer.
 */

/** Where a page lies: messages `[start, stop)`, and the index of the turn message `stop - 1` belongs to. */
export interface PageRange {
  start: number;
  stop: number;
  lastTurn: number;
}

/** The range of the page `options` asks for, in a session of `total` messages and `turnCount` turns. */
export function pageRange(total: number, turnCount: number, { limit, before }: ReadPageOptions): PageRange {
  const stop = before ? Math.min(before.message, total) : total;
  const lastTurn = Math.min(before ? before.turn : turnCount - 1, turnCount - 1);
  return { start: Math.max(0, stop - Math.max(1, Math.floor(limit))), stop, lastTurn };
}

/** The indices `[first, last]` of the turns `messages` (a page whose last message belongs to turn `lastTurn`) belong to. */
export function pageTurnRange(
  messages: readonly MessageItem[],
  lastTurn: number,
): { first: number; last: number } {
  if (messages.length === 0 || lastTurn < 0) return { first: 0, last: -1 };
  let users = 0;
  for (const message of messages) if (message.role === 'user') users += 1;
  const first = lastTurn - users + (messages[0]?.role === 'user' ? 1 : 0);
  return { first: Math.max(0, first), last: lastTurn };
}

/**
 * Builds the page from its messages (which start at `start`) and the turns
 * read for {@link pageTurnRange} (starting at index `first`): keeps only the
 * turns the messages belong to, checked by their user message ids.
 */
export function finishPage(
  messages: MessageItem[],
  candidates: readonly TurnRecord[],
  { start, first, lastTurn }: { start: number; first: number; lastTurn: TurnRecord | undefined },
): HistoryPage {
  const userIds = new Set<string>();
  for (const message of messages) if (message.role === 'user') userIds.add(message.id);
  const leading = messages.length > 0 && messages[0]?.role !== 'user';
  const turns = candidates.filter(
    (turn, index) => userIds.has(turn.userMessageId) || (leading && index === 0),
  );
  const page: HistoryPage = { messages, turns };
  if (lastTurn) page.lastTurn = lastTurn;
  if (start > 0 && messages.length > 0) {
    page.before = { message: start, turn: Math.max(0, leading ? first : first - 1) };
  }
  return page;
}

/**
 * A page of history cut from a session held whole (`messages` and `turns`,
 * oldest first): what a store without a ranged read, or one in memory, returns
 * for `SessionStore.readPage`. The records are not copied.
 *
 * @example
 * ```ts
 * const page = historyPageOf(await store.read(id), await store.listTurns(id), { limit: 50 });
 * ```
 */
export function historyPageOf(
  messages: readonly MessageItem[],
  turns: readonly TurnRecord[],
  options: ReadPageOptions,
): HistoryPage {
  const { start, stop, lastTurn } = pageRange(messages.length, turns.length, options);
  const page = messages.slice(start, stop);
  const { first, last } = pageTurnRange(page, lastTurn);
  return finishPage(page, turns.slice(first, last + 1), { start, first, lastTurn: turns[turns.length - 1] });
}
