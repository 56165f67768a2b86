import type { SessionStore } from '../stores/session-store.js';
import { tenantSessions } from '../stores/tenant-sessions.js';

/** Tenant views kept before the cache starts over (they are cheap to rebuild). */
const MAX_TENANT_VIEWS = 10_000;

/** What a tenant sees of the session store: its view of the store, and its sessions' idle time. */
export class SessionViews {
  readonly #sessions: SessionStore;
  readonly #idleSeconds: number;
  readonly #tenantIdleSeconds: Readonly<Record<string, number>>;
  /** Each tenant's view of the session store (few tenants: kept). */
  readonly #views = new Map<string, SessionStore>();

  constructor(
    sessions: SessionStore,
    idleSeconds: number,
    tenantIdleSeconds: Readonly<Record<string, number>>,
  ) {
    this.#sessions = sessions;
    this.#idleSeconds = idleSeconds;
    this.#tenantIdleSeconds = tenantIdleSeconds;
  }

  /** The session store as `tenantId` sees it (the store itself without a tenant). */
  of(tenantId: string | undefined): SessionStore {
    if (tenantId === undefined) return this.#sessions;
    let view = this.#views.get(tenantId);
    if (!view) {
      if (this.#views.size >= MAX_TENANT_VIEWS) this.#views.clear();
      view = tenantSessions(this.#sessions, tenantId);
      this.#views.set(tenantId, view);
    }
    return view;
  }

  /** The idle time of a tenant's sessions, in seconds. */
  idleSeconds(tenantId: string | undefined): number {
    const own = tenantId === undefined ? undefined : this.#tenantIdleSeconds[tenantId];
    return own ?? this.#idleSeconds;
  }

  /** The idle time to pass to the store for a tenant with one of its own (ms), else undefined (the store's). */
  storeIdleMs(tenantId: string | undefined): number | undefined {
    const own = tenantId === undefined ? undefined : this.#tenantIdleSeconds[tenantId];
    return own === undefined ? undefined : own * 1000;
  }
}
