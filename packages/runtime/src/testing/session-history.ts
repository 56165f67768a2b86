import type { MessageItem } from '@switchboard/core';
import type { ApprovalRecord, TurnRecord } from '../turns/turn-record.js';

/** A whole session as its pages of `GET /v1/sessions/:id` add up to. */
export interface SessionHistory {
  sessionId: string;
  /** Every message, oldest first. */
  messages: MessageItem[];
  /** Every turn, oldest first (a turn that spans two pages once). */
  turns: TurnRecord[];
  pendingApprovals: ApprovalRecord[];
  activeTurn?: { turnId: string; status: TurnRecord['status'] };
}

interface SessionPage extends SessionHistory {
  before?: string;
}

/**
 * Reads a session's whole history through `GET /v1/sessions/:id`, page by
 * page (`limit` messages each, the largest the server allows by default),
 * following the `before` cursor back to the first message. `get` fetches a
 * path of the server (`app.request`, or `fetch` with a base URL).
 *
 * @example
 * ```ts
 * const history = await readSessionHistory((path) => app.request(path), sessionId);
 * expect(historyProblems(history.messages, history.turns)).toEqual([]);
 * ```
 */
export async function readSessionHistory(
  get: (path: string) => Response | Promise<Response>,
  sessionId: string,
  limit = 200,
): Promise<SessionHistory> {
  const pages: SessionPage[] = [];
  let before: string | undefined;
  do {
    const query = new URLSearchParams({ limit: String(limit) });
    if (before !== undefined) query.set('before', before);
    const response = await get(`/v1/sessions/${encodeURIComponent(sessionId)}?${query}`);
    if (response.status !== 200) throw new Error(`GET /v1/sessions/${sessionId}: ${response.status}`);
    const page = (await response.json()) as SessionPage;
    pages.unshift(page);
    before = page.before;
  } while (before !== undefined);
  const newest = pages[pages.length - 1] as SessionPage;
  const turns = new Map<string, TurnRecord>();
  for (const page of pages) for (const turn of page.turns) turns.set(turn.turnId, turn);
  const history: SessionHistory = {
    sessionId: newest.sessionId,
    messages: pages.flatMap((page) => page.messages),
    turns: [...turns.values()],
    pendingApprovals: newest.pendingApprovals,
  };
  if (newest.activeTurn) history.activeTurn = newest.activeTurn;
  return history;
}
