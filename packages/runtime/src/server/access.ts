import type { Context, MiddlewareHandler } from 'hono';
import type { AuthOptions, Principal } from '../backend/principal.js';
import { type RateLimitRefusal, type TurnCharge, UNLIMITED } from '../backend/turn-charge.js';
import type { RateLimiter } from '../stores/rate-limiter.js';
import { DEFAULT_PUBLIC_ROUTES, isPublicRoute } from './auth.js';
import { clientAddressOf } from './client-address.js';
import { errorResponse } from './http-errors.js';
import { noteRequest } from './request-log.js';

/**
 * The app's rate limits. Turns and requests are counted per API key; failed
 * authentications and requests to the public routes per client address.
 * They apply with `auth` (without it there is no key to count by).
 *
 * @example
 * ```ts
 * new App({
 *   name: 'desk',
 *   agents,
 *   auth: apiKeys({ keys }),
 *   rateLimit: { requestsPerMinute: 600, trustedProxies: ['10.0.0.0/8'] },
 * });
 * ```
 */
export interface RateLimitOptions {
  /**
   * Turns per minute per API key (a key's own `requestsPerMinute` overrides
   * it). Every request counts one, and a request that runs several turns
   * (a JSON-RPC batch of MCP tool calls) one per turn, on every surface:
   * `/v1/chat`, the OpenAI-compatible routes, A2A and MCP. Past it: 429 with
   * `Retry-After` (a refused MCP call gets a JSON-RPC error instead). Without
   * it, keys are not limited.
   */
  requestsPerMinute?: number;
  /**
   * Failed authentications per minute per client address (default 30):
   * past it, the address gets 429 with `Retry-After` until the minute is
   * over, whatever key it sends (a right key from another address still
   * works). With several replicas each allows at most one more.
   */
  failedAuthPerMinute?: number;
  /** Requests per minute per client address to the public routes (`/healthz`, the agent card, `/docs`…; default 600). */
  publicRequestsPerMinute?: number;
  /**
   * The proxies whose `X-Forwarded-For` is believed: addresses (`10.0.0.7`)
   * or ranges (`10.0.0.0/8`). The client address is then the rightmost one
   * in `X-Forwarded-For` that is not a trusted proxy. Default none: the
   * client address is the peer's (behind a proxy, every client then shares
   * the proxy's address and its limits).
   */
  trustedProxies?: readonly string[];
}

/** Default {@link RateLimitOptions.failedAuthPerMinute}. */
export const DEFAULT_FAILED_AUTH_PER_MINUTE = 30;
/** Default {@link RateLimitOptions.publicRequestsPerMinute}. */
export const DEFAULT_PUBLIC_REQUESTS_PER_MINUTE = 600;
/** Addresses remembered as throttled for failing authentication, at most (the oldest are forgotten first). */
const MAX_THROTTLED_ADDRESSES = 10_000;
const WINDOW_MS = 60_000;

/** The context variables access control sets (the request object itself may be replaced, e.g. by the body limiter). */
type WithAccess = Context<{ Variables: { principal?: Principal; turnCharge?: TurnCharge } }>;

/** The principal a request was authenticated as, or undefined (auth off, or a public route). */
export function principalOf(c: Context): Principal | undefined {
  return (c as WithAccess).get('principal');
}

/** Counts the request's turns past its first against its key's rate limit (see {@link TurnCharge}). */
export function turnChargeOf(c: Context): TurnCharge {
  return (c as WithAccess).get('turnCharge') ?? UNLIMITED;
}

/** True for the routes that answer in the OpenAI error shape. */
function speaksOpenAi(path: string): boolean {
  return (
    path.startsWith('/v1/chat/completions') ||
    path.startsWith('/v1/models') ||
    path.startsWith('/v1/responses')
  );
}

function refuse(c: Context, status: 401 | 429, code: string, message: string): Response {
  if (speaksOpenAi(c.req.path)) {
    const type = status === 401 ? 'authentication_error' : 'rate_limit_error';
    return c.json({ error: { message, type, code, param: null } }, status);
  }
  return errorResponse(c, status, code, message);
}

const secondsUntil = (at: number) => Math.max(1, Math.ceil((at - Date.now()) / 1000));

/** 429 with `Retry-After`. */
function throttled(c: Context, retryAfterSeconds: number, message: string): Response {
  c.header('Retry-After', String(retryAfterSeconds));
  return refuse(c, 429, 'rate_limited', message);
}

/**
 * Checks every request: a public route counts against its client address's
 * `publicRequestsPerMinute`; any other needs a credential: a missing or
 * unknown one is 401 (`WWW-Authenticate: Bearer`), and past
 * `failedAuthPerMinute` failures from its address 429; past the key's rate
 * limit, 429 with `Retry-After`. The principal is then available to the
 * routes through {@link principalOf}, and the counting of further turns
 * through {@link turnChargeOf}. Registered only when the app has `auth`, so
 * an open server pays nothing for it.
 */
export function accessControl(
  auth: AuthOptions,
  { rateLimit = {}, rateLimiter }: { rateLimit?: RateLimitOptions; rateLimiter: RateLimiter },
): MiddlewareHandler {
  const publicRoutes = auth.publicRoutes ?? DEFAULT_PUBLIC_ROUTES;
  const {
    failedAuthPerMinute = DEFAULT_FAILED_AUTH_PER_MINUTE,
    publicRequestsPerMinute = DEFAULT_PUBLIC_REQUESTS_PER_MINUTE,
  } = rateLimit;
  const addressOf = clientAddressOf(rateLimit.trustedProxies);
  /** Address → when its failed authentications stop being refused (epoch ms). */
  const throttledUntil = new Map<string, number>();

  const countFailure = async (address: string): Promise<number | undefined> => {
    const { count, resetAt } = await rateLimiter.hit(`auth-failure\n${address}`, WINDOW_MS);
    if (count <= failedAuthPerMinute) return undefined;
    throttledUntil.delete(address);
    throttledUntil.set(address, resetAt);
    if (throttledUntil.size > MAX_THROTTLED_ADDRESSES) {
      const oldest = throttledUntil.keys().next().value;
      if (oldest !== undefined) throttledUntil.delete(oldest);
    }
    return resetAt;
  };
  const tooManyFailures = (c: Context, until: number) =>
    throttled(
      c,
      secondsUntil(until),
      `Too many failed authentications from this address (limit ${failedAuthPerMinute} a minute); retry later`,
    );

  return async (c, next) => {
    if (isPublicRoute(c.req.path, publicRoutes)) {
      const { count, resetAt } = await rateLimiter.hit(`public\n${addressOf(c)}`, WINDOW_MS);
      if (count > publicRequestsPerMinute)
        return throttled(
          c,
          secondsUntil(resetAt),
          `Rate limit of ${publicRequestsPerMinute} requests per minute exceeded; retry later`,
        );
      return next();
    }
    // Checked before the key, so that a throttled address learns nothing of the keys it tries. The address
    // is looked up only while some address is throttled, or on a failure: most requests never need it.
    if (throttledUntil.size > 0) {
      const address = addressOf(c);
      const until = throttledUntil.get(address);
      if (until !== undefined) {
        if (until > Date.now()) return tooManyFailures(c, until);
        throttledUntil.delete(address);
      }
    }
    const principal = await auth.authenticate(c.req.raw);
    if (!principal) {
      const throttledAt = await countFailure(addressOf(c));
      if (throttledAt !== undefined) return tooManyFailures(c, throttledAt);
      c.header('WWW-Authenticate', 'Bearer');
      return refuse(
        c,
        401,
        'unauthorized',
        'A valid API key is required: send it as Authorization: Bearer <key>',
      );
    }
    (c as WithAccess).set('principal', principal);
    noteRequest(c, { principal });
    const limit = principal.requestsPerMinute ?? rateLimit.requestsPerMinute;
    if (limit === undefined) return next();
    const bucket = `${principal.tenantId}\n${principal.keyName ?? ''}`;
    const count = async (): Promise<RateLimitRefusal | undefined> => {
      const { count, resetAt } = await rateLimiter.hit(bucket, WINDOW_MS);
      if (count <= limit) return undefined;
      return {
        limit,
        retryAfterSeconds: secondsUntil(resetAt),
        message: `Rate limit of ${limit} turns and requests per minute exceeded; retry later`,
      };
    };
    const refused = await count();
    if (refused) return throttled(c, refused.retryAfterSeconds, refused.message);
    // The request's own count pays for its first turn; each further turn counts one more.
    let paid = true;
    (c as WithAccess).set('turnCharge', () => {
      if (!paid) return count();
      paid = false;
      return Promise.resolve(undefined);
    });
    return next();
  };
}
