/**
 * Who a request acts for, and how the app finds out: the same for every
 * protocol the app speaks (its HTTP API, A2A, MCP).
 *
 * @module
 */

/**
 * What a key may do. `admin` may do everything (and is what a tenant-wide
 * key without scopes gets, as before scopes existed).
 *
 * - `chat`: run turns (`POST /v1/chat`, `/v1/chat/completions`, `/v1/responses`, MCP, A2A) and cancel them.
 * - `sessions:read`: list and read sessions (and `GET /v1/responses/:id`).
 * - `sessions:delete`: delete sessions, and a user's data.
 * - `approvals:decide`: approve or reject (subject to the app's `approvers`).
 * - `config:read`: read the tenant's live configuration items and their versions (`GET /v1/config…`).
 * - `config:write`: also change them: put, delete, roll back (`config:read` included).
 */
export type KeyScope = (typeof KEY_SCOPES)[number];

/** Every scope, for checking configuration. */
export const KEY_SCOPES = [
  'chat',
  'sessions:read',
  'sessions:delete',
  'approvals:decide',
  'config:read',
  'config:write',
  'admin',
] as const;

/** The scopes of a key bound to a user that names none: its own conversations, not approvals. */
export const DEFAULT_USER_SCOPES: readonly KeyScope[] = ['chat', 'sessions:read', 'sessions:delete'];
/** The scopes of a tenant-wide key that names none: everything, as before scopes existed. */
export const DEFAULT_TENANT_SCOPES: readonly KeyScope[] = ['admin'];

/** Who a request acts for, once authenticated. */
export interface Principal {
  /** Sessions, memory and rate limits are scoped to it. */
  tenantId: string;
  /** The key's name, for logs and traces (never the key itself). */
  keyName?: string;
  /**
   * When the key belongs to one user: the user every request of the key
   * acts as, who sees and acts on that user's sessions only.
   */
  userId?: string;
  /**
   * What the key may do. Absent: {@link DEFAULT_USER_SCOPES} for a key with
   * a `userId`, {@link DEFAULT_TENANT_SCOPES} for one without.
   */
  scopes?: readonly KeyScope[];
  /** This key's own rate limit in turns per minute, overriding the app's `rateLimit.requestsPerMinute`. */
  requestsPerMinute?: number;
}

/** The scopes a principal holds, defaults applied. */
export function scopesOf(principal: Principal): readonly KeyScope[] {
  return principal.scopes ?? (principal.userId === undefined ? DEFAULT_TENANT_SCOPES : DEFAULT_USER_SCOPES);
}

/** True when the principal may do what `scope` covers (`admin` covers everything). */
export function hasScope(principal: Principal, scope: KeyScope): boolean {
  const scopes = scopesOf(principal);
  return scopes.includes(scope) || scopes.includes('admin');
}

/**
 * How the server authenticates requests. With it, every route but
 * `publicRoutes` needs a credential; a request `authenticate` does not
 * accept gets 401.
 */
export interface AuthOptions {
  /** The principal of the request (usually from `Authorization: Bearer …`), or undefined to refuse it. */
  authenticate(request: Request): Principal | undefined | Promise<Principal | undefined>;
  /**
   * Paths served without a credential: an entry matches the path itself and
   * everything below it (`/console` covers `/console/app.js`). Default
   * `DEFAULT_PUBLIC_ROUTES`.
   */
  publicRoutes?: readonly string[];
}
