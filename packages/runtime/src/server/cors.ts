import { ConfigurationError } from '@switchboard/core';
import type { MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';

/**
 * Cross-origin access for browser clients (off unless given).
 *
 * @example
 * ```ts
 * new App({ name: 'desk', agents, cors: { origins: ['https://desk.example.com'] } });
 * ```
 */
export interface CorsOptions {
  /** The origins that may call the API, e.g. `['https://app.example.com']`, or `'*'` for any. */
  origins: readonly string[] | '*';
  /** Request headers a browser may send besides the defaults (`content-type`, `authorization`, `accept`, `idempotency-key`, `x-request-id`, `x-session-id`). */
  allowHeaders?: readonly string[];
  /** Response headers a browser script may read besides the defaults (`x-session-id`, `x-request-id`, `retry-after`). */
  exposeHeaders?: readonly string[];
  /** How long a browser may cache a preflight answer (default 600 s). */
  maxAgeSeconds?: number;
  /** Allow cookies and HTTP authentication (`Access-Control-Allow-Credentials`); not with `'*'`. Default false. */
  credentials?: boolean;
}

const ALLOW_HEADERS = [
  'content-type',
  'authorization',
  'accept',
  'idempotency-key',
  'x-request-id',
  'x-session-id',
];
const EXPOSE_HEADERS = ['x-session-id', 'x-request-id', 'retry-after'];
const ALLOW_METHODS = ['GET', 'POST', 'DELETE', 'OPTIONS'];

/** Throws a `ConfigurationError` for options no browser would accept (called when the app is built). */
export function checkCorsOptions({ origins, credentials }: CorsOptions): void {
  if (origins !== '*' && (!Array.isArray(origins) || origins.some((origin) => typeof origin !== 'string'))) {
    throw new ConfigurationError({ message: "cors.origins must be a list of origins or '*'" });
  }
  if (credentials && origins === '*') {
    // Browsers refuse credentials with a wildcard origin: fail now rather than at the first request.
    throw new ConfigurationError({ message: "cors: credentials need a list of origins, not '*'" });
  }
}

/** The CORS middleware for `options`: answers preflights and adds the `Access-Control-*` headers. */
export function corsMiddleware(options: CorsOptions): MiddlewareHandler {
  checkCorsOptions(options);
  const {
    origins,
    allowHeaders = [],
    exposeHeaders = [],
    maxAgeSeconds = 600,
    credentials = false,
  } = options;
  return cors({
    origin: origins === '*' ? '*' : [...origins],
    allowMethods: ALLOW_METHODS,
    allowHeaders: [...new Set([...ALLOW_HEADERS, ...allowHeaders])],
    exposeHeaders: [...new Set([...EXPOSE_HEADERS, ...exposeHeaders])],
    maxAge: maxAgeSeconds,
    credentials,
  });
}
