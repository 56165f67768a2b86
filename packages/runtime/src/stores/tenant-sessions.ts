import type { SessionStore } from './session-store.js';

/**
 * One tenant's view of a {@link SessionStore}: every session id is stored
 * under the tenant (see `sessionStoreId`), so a tenant can neither read nor
 * continue nor delete another tenant's session, whatever id it sends: it
 * finds nothing there. Leases and cancels are scoped the same way.
 */
export function tenantSessions(store: SessionStore, tenantId: string): SessionStore {
  const id = (sessionId: string) => sessionStoreId(sessionId, tenantId);
  const view: SessionStore = {
    specificationVersion: store.specificationVersion,
    openTurn: (sessionId, userMessage, options) => store.openTurn(id(sessionId), userMessage, options),
    append: (sessionId, messages, options) => store.append(id(sessionId), messages, options),
    read: (sessionId, options) => store.read(id(sessionId), options),
    lastTurn: (sessionId) => store.lastTurn(id(sessionId)),
    listTurns: (sessionId) => store.listTurns(id(sessionId)),
    exists: (sessionId) => store.exists(id(sessionId)),
    delete: (sessionId) => store.delete(id(sessionId)),
    acquireLease: (sessionId, options) => store.acquireLease(id(sessionId), options),
  };
  const { publishCancel } = store;
  if (publishCancel)
    view.publishCancel = (sessionId, turnId) => publishCancel.call(store, id(sessionId), turnId);
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
