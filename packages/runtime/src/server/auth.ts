import { createHash, timingSafeEqual } from 'node:crypto';
import { ConfigurationError } from '@switchboard/core';
import type { AuthOptions, Principal } from '../backend/principal.js';

/** The routes open without a key by default: health, the API document and docs, the console, the agent card. */
export const DEFAULT_PUBLIC_ROUTES: readonly string[] = [
  '/healthz',
  '/readyz',
  '/openapi.json',
  '/docs',
  '/console',
  '/.well-known/agent-card.json',
];

/** One API key's owner, as given to {@link apiKeys}. */
export interface ApiKeyOwner {
  tenantId: string;
  /** A name for logs and traces, e.g. `ci-bot` (default: the tenant id). */
  name?: string;
  /** When the key belongs to one user: requests act as that user, whatever `userId` they send. */
  userId?: string;
  /** This key's rate limit in turns per minute (see `RateLimitOptions.requestsPerMinute`), overriding the app's. */
  requestsPerMinute?: number;
}

/** Options of {@link apiKeys}. */
export interface ApiKeysOptions {
  /** Key → owner. Keys should be long random strings (`sk-` + 32 random bytes, say). */
  keys: Readonly<Record<string, ApiKeyOwner>>;
  /** See {@link AuthOptions.publicRoutes}. */
  publicRoutes?: readonly string[];
}

const digest = (key: string) => createHash('sha256').update(key).digest();

/** The bearer token of a request, if it sent one. */
export function bearerToken(request: Request): string | undefined {
  const header = request.headers.get('authorization');
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

/**
 * Authentication with static API keys sent as `Authorization: Bearer <key>`.
 * Keys are kept only as SHA-256 digests and compared in constant time; they
 * are never logged or traced (the key's `name` is).
 *
 * @example
 * ```ts
 * const app = new App({
 *   name: 'support',
 *   agents,
 *   auth: apiKeys({ keys: { [process.env.ACME_KEY!]: { tenantId: 'acme', name: 'acme-web' } } }),
 * });
 * ```
 */
export function apiKeys({ keys, publicRoutes }: ApiKeysOptions): AuthOptions {
  const owners: Array<{ digest: Buffer; principal: Principal }> = [];
  for (const [key, owner] of Object.entries(keys)) {
    if (typeof key !== 'string' || key.length < 16) {
      throw new ConfigurationError({ message: 'API keys must be at least 16 characters long' });
    }
    if (!owner || typeof owner.tenantId !== 'string' || owner.tenantId === '') {
      throw new ConfigurationError({ message: `API key '${owner?.name ?? '(unnamed)'}' needs a tenantId` });
    }
    const principal: Principal = { tenantId: owner.tenantId, keyName: owner.name ?? owner.tenantId };
    if (owner.userId) principal.userId = owner.userId;
    if (owner.requestsPerMinute !== undefined) principal.requestsPerMinute = owner.requestsPerMinute;
    owners.push({ digest: digest(key), principal });
  }
  if (owners.length === 0) throw new ConfigurationError({ message: 'apiKeys() needs at least one key' });
  const options: AuthOptions = {
    authenticate(request) {
      const token = bearerToken(request);
      if (token === undefined) return undefined;
      const presented = digest(token);
      // Every key is compared, in constant time, whichever matches: the time says nothing about the keys.
      let found: Principal | undefined;
      for (const owner of owners) if (timingSafeEqual(owner.digest, presented)) found = owner.principal;
      return found;
    },
  };
  if (publicRoutes) options.publicRoutes = publicRoutes;
  return options;
}

/** True when `path` is one of `publicRoutes` or below one. */
export function isPublicRoute(path: string, publicRoutes: readonly string[]): boolean {
  for (const route of publicRoutes) {
    if (path === route || path.startsWith(route.endsWith('/') ? route : `${route}/`)) return true;
  }
  return false;
}
