/**
 * How an `InMemorySessionStore` lists a tenant's sessions, most recently
 * written first, a page at a time.
 *
 * @module
 */
import { z } from 'zod';
import type { InMemoryLeases } from './in-memory-leases.js';
import { messageCount, type SessionData } from './in-memory-session-data.js';
import type { SealedPageCursors } from './page-cursor.js';
import type { ListSessionsOptions, SessionListPage, SessionSummary } from './session-store.js';

/** A cursor of `listSessions`: the write number of the last session listed (sealed: it counts every tenant's writes). */
const ListCursorSchema = z.number().int().nonnegative();

/**
 * A page of the tenant's sessions: the map's own order (least recently
 * written first), walked backwards. See `InMemorySessionStore.listSessions`.
 */
export function listSessionsOf(
  store: ReadonlyMap<string, SessionData>,
  leases: InMemoryLeases,
  cursors: SealedPageCursors,
  { limit, cursor, tenant }: ListSessionsOptions,
): SessionListPage {
  const before =
    cursor === undefined ? Number.POSITIVE_INFINITY : cursors.open(cursor, ListCursorSchema, tenant);
  const entries = [...store];
  const now = Date.now();
  const sessions: SessionSummary[] = [];
  let lastListed = 0;
  for (let index = entries.length - 1; index >= 0; index--) {
    const [sessionId, session] = entries[index] as [string, SessionData];
    if (session.writeNumber >= before || session.tenant !== (tenant ?? null) || messageCount(session) === 0)
      continue;
    if (session.expiresAt <= now && !leases.isHeld(sessionId)) continue;
    if (sessions.length === limit) return { sessions, nextCursor: cursors.seal(lastListed, tenant) };
    sessions.push({ sessionId, lastActiveAt: session.lastActiveAt, messageCount: messageCount(session) });
    lastListed = session.writeNumber;
  }
  return { sessions };
}
