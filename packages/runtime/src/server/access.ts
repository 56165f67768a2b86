import type { Context, MiddlewareHandler } from 'hono';
import type { AuthOptions, Principal } from '../backend/principal.js';
import type { RateLimiter } from '../stores/rate-limiter.js';
import { DEFAULT_PUBLIC_ROUTES, isPublicRoute } from './auth.js';
import { errorResponse } from './http-errors.js';

/** The app's rate limit: requests per minute per API key (a key's own limit overrides it). */
export interface RateLimitOptions {
  requestsPerMinute: number;
}

/** The context variable the principal travels in (the request object itself may be replaced, e.g. by the body limiter). */
type WithPrincipal = Context<{ Variables: { principal?: Principal } }>;

/** The principal a request was authenticated as, or undefined (auth off, or a public route). */
export function principalOf(c: Context): Principal | undefined {
  return (c as WithPrincipal).get('principal');
}

/** True for the routes that answer in the OpenAI error shape. */
function speaksOpenAi(path: string): boolean {
  return path.startsWith('/v1/chat/completions') || path.startsWith('/v1/models');
}

function refuse(c: Context, status: 401 | 429, code: string, message: string): Response {
  if (speaksOpenAi(c.req.path)) {
    const type = status === 401 ? 'authentication_error' : 'rate_limit_error';
    return c.json({ error: { message, type, code, param: null } }, status);
  }
  return errorResponse(c, status, code, message);
}

/**
 * Checks every request but the public routes: a missing or unknown
 * credential is 401 (`WWW-Authenticate: Bearer`); past the key's rate limit,
 * 429 with `Retry-After`. The principal is then available to the routes
 * through {@link principalOf}. Registered only when the app has `auth`, so
 * an open server pays nothing for it.
 */
export function accessControl(
  auth: AuthOptions,
  { rateLimit, rateLimiter }: { rateLimit?: RateLimitOptions; rateLimiter: RateLimiter },
): MiddlewareHandler {
  const publicRoutes = auth.publicRoutes ?? DEFAULT_PUBLIC_ROUTES;
  return async (c, next) => {
    if (isPublicRoute(c.req.path, publicRoutes)) return next();
    const principal = await auth.authenticate(c.req.raw);
    if (!principal) {
      c.header('WWW-Authenticate', 'Bearer');
      return refuse(
        c,
        401,
        'unauthorized',
        'A valid API key is required: send it as Authorization: Bearer <key>',
      );
    }
    const limit = principal.requestsPerMinute ?? rateLimit?.requestsPerMinute;
    if (limit !== undefined) {
      const bucket = `${principal.tenantId}\n${principal.keyName ?? ''}`;
      const { count, resetAt } = await rateLimiter.hit(bucket, 60_000);
      if (count > limit) {
        c.header('Retry-After', String(Math.max(1, Math.ceil((resetAt - Date.now()) / 1000))));
        return refuse(
          c,
          429,
          'rate_limited',
          `Rate limit of ${limit} requests per minute exceeded; retry later`,
        );
      }
    }
    (c as WithPrincipal).set('principal', principal);
    return next();
  };
}
