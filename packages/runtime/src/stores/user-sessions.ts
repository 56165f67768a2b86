import type { HistoryPage, SessionListPage, SessionStore } from './session-store.js';

/**
 * The user who owns a session: the `userId` of its first turn (who started
 * it). `null` when the session has no turn (it does not exist yet);
 * undefined when its first turn named no user.
 */
export async function sessionOwner(
  sessions: SessionStore,
  sessionId: string,
): Promise<string | null | undefined> {
  const [first] = await sessions.listTurns(sessionId);
  return first ? (first.userId ?? undefined) : null;
}

/**
 * One user's view of a (tenant's) {@link SessionStore}, for reads: another
 * user's session, or one no user started, reads as absent (empty history,
 * no turns), and `listSessions` lists only the user's own, so a page may
 * hold fewer than `limit` while more follow. Writes go through unchanged:
 * the server checks ownership before a turn, a cancel or a delete.
 */
export function userSessions(store: SessionStore, userId: string): SessionStore {
  const owns = async (sessionId: string) => (await sessionOwner(store, sessionId)) === userId;
  const view: SessionStore = {
    ...bind(store),
    read: async (sessionId, options) => ((await owns(sessionId)) ? store.read(sessionId, options) : []),
    lastTurn: async (sessionId) => ((await owns(sessionId)) ? store.lastTurn(sessionId) : undefined),
    listTurns: async (sessionId) => {
      const turns = await store.listTurns(sessionId);
      return turns[0]?.userId === userId ? turns : [];
    },
    exists: async (sessionId) => owns(sessionId),
  };
  const { readPage, listSessions } = store;
  if (readPage) {
    view.readPage = async (sessionId, options): Promise<HistoryPage> =>
      (await owns(sessionId)) ? readPage.call(store, sessionId, options) : { messages: [], turns: [] };
  }
  if (listSessions) {
    view.listSessions = async (options): Promise<SessionListPage> => {
      const page = await listSessions.call(store, options);
      // One read per listed session, all in the same tick (pipelined on Redis).
      const owned = await Promise.all(page.sessions.map((session) => owns(session.sessionId)));
      const sessions = page.sessions.filter((_, index) => owned[index]);
      return page.nextCursor === undefined ? { sessions } : { sessions, nextCursor: page.nextCursor };
    };
  }
  return view;
}

/** The store's methods bound to it, so that a view can pass them on. */
function bind(store: SessionStore): SessionStore {
  const bound: SessionStore = {
    specificationVersion: store.specificationVersion,
    openTurn: store.openTurn.bind(store),
    append: store.append.bind(store),
    read: store.read.bind(store),
    lastTurn: store.lastTurn.bind(store),
    listTurns: store.listTurns.bind(store),
    exists: store.exists.bind(store),
    delete: store.delete.bind(store),
    acquireLease: store.acquireLease.bind(store),
  };
  if (store.publishCancel) bound.publishCancel = store.publishCancel.bind(store);
  return bound;
}
