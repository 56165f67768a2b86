import { isPromiseLike } from '../promise-like.js';
import type { SessionListPage, SessionStore } from './session-store.js';

/**
 * One tenant's view of a {@link SessionStore}: every session id is stored
 * under the tenant (see `sessionStoreId`), so a tenant can neither read nor
 * continue nor delete another tenant's session, whatever id it sends: it
 * finds nothing there. Leases and cancels are scoped the same way, and
 * `listSessions` lists the tenant's sessions only, under the ids it knows.
 */
export function tenantSessions(store: SessionStore, tenantId: string): SessionStore {
  const id = (sessionId: string) => sessionStoreId(sessionId, tenantId);
  const view: SessionStore = {
    specificationVersion: store.specificationVersion,
    openTurn: (sessionId, userMessage, options) =>
      store.openTurn(id(sessionId), userMessage, { ...options, tenant: tenantId }),
    append: (sessionId, messages, options) => store.append(id(sessionId), messages, options),
    read: (sessionId, options) => store.read(id(sessionId), options),
    lastTurn: (sessionId) => store.lastTurn(id(sessionId)),
    listTurns: (sessionId) => store.listTurns(id(sessionId)),
    exists: (sessionId) => store.exists(id(sessionId)),
    delete: (sessionId) => store.delete(id(sessionId), { tenant: tenantId }),
    acquireLease: (sessionId, options) => store.acquireLease(id(sessionId), options),
  };
  const { publishCancel, readPage, listSessions } = store;
  if (publishCancel)
    view.publishCancel = (sessionId, turnId) => publishCancel.call(store, id(sessionId), turnId);
  if (readPage) view.readPage = (sessionId, options) => readPage.call(store, id(sessionId), options);
  if (listSessions) {
    const prefix = id('');
    const strip = (page: SessionListPage): SessionListPage => ({
      ...page,
      sessions: page.sessions
        .filter((session) => session.sessionId.startsWith(prefix))
        .map((session) => ({ ...session, sessionId: session.sessionId.slice(prefix.length) })),
    });
    view.listSessions = (options) => {
      const page = listSessions.call(store, { ...options, tenant: tenantId });
      return isPromiseLike<SessionListPage>(page) ? Promise.resolve(page).then(strip) : strip(page);
    };
  }
  return view;
}

/**
 * The session id a store keeps a tenant's session under: the tenant comes
 * first, so that another tenant's request for the same id finds nothing.
 * Without a tenant (no auth), the session id itself.
 */
export function sessionStoreId(sessionId: string, tenantId: string | undefined): string {
  return tenantId === undefined ? sessionId : `${encodeURIComponent(tenantId)}/${sessionId}`;
}

/** The tenant and session of a store id (see {@link sessionStoreId}): a tenant's ids hold a `/`, session ids never do. */
export function parseStoreId(storeId: string): { sessionId: string; tenantId: string | undefined } {
  const slash = storeId.indexOf('/');
  if (slash < 0) return { sessionId: storeId, tenantId: undefined };
  return { tenantId: decodeURIComponent(storeId.slice(0, slash)), sessionId: storeId.slice(slash + 1) };
}
