import type { SessionBody, TurnRecord } from './types.js';

/**
 * Joins two pages of one session's history: `older` first, each message and
 * turn once (a turn can straddle two pages: the newer page's record wins);
 * the cursor is the older page's, the approvals the newer page's.
 */
export function mergePages(older: SessionBody, newer: SessionBody): SessionBody {
  const ids = new Set(newer.messages.map((message) => message.id));
  const newerTurns = new Map(newer.turns.map((turn) => [turn.turnId, turn]));
  const turnsOf: TurnRecord[] = older.turns.map((turn) => newerTurns.get(turn.turnId) ?? turn);
  const olderIds = new Set(older.turns.map((turn) => turn.turnId));
  const merged: SessionBody = {
    ...newer,
    messages: [...older.messages.filter((message) => !ids.has(message.id)), ...newer.messages],
    turns: [...turnsOf, ...newer.turns.filter((turn) => !olderIds.has(turn.turnId))],
  };
  if (older.before) merged.before = older.before;
  else delete merged.before;
  return merged;
}
