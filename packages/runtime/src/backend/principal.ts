/**
 * Who a request acts for, and how the app finds out: the same for every
 * protocol the app speaks (its HTTP API, A2A, MCP).
 *
 * @module
 */

/** Who a request acts for, once authenticated. */
export interface Principal {
  /** Sessions, memory and rate limits are scoped to it. */
  tenantId: string;
  /** The key's name, for logs and traces (never the key itself). */
  keyName?: string;
  /** When the key belongs to one user: the user every request of the key acts as. */
  userId?: string;
  /** This key's own rate limit in turns per minute, overriding the app's `rateLimit.requestsPerMinute`. */
  requestsPerMinute?: number;
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
