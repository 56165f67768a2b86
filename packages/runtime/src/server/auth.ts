import { hash, timingSafeEqual } from 'node:crypto';
import { ConfigurationError } from '@switchboard/core';
import { type AuthOptions, KEY_SCOPES, type KeyScope, type Principal } from '../backend/principal.js';

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
  /**
   * When the key belongs to one user: requests act as that user, whatever
   * `userId` they send, and see and act on that user's sessions only.
   */
  userId?: string;
  /**
   * What the key may do (see {@link KeyScope}). Default: `chat`,
   * `sessions:read` and `sessions:delete` for a key with a `userId`;
   * `admin` (everything) for a tenant-wide key.
   */
  scopes?: readonly KeyScope[];
  /** When the key stops working (ISO 8601 or a `Date`): past it, its requests get 401. */
  expiresAt?: string | Date;
  /** This key's rate limit in turns per minute (see `RateLimitOptions.requestsPerMinute`), overriding the app's. */
  requestsPerMinute?: number;
}

/** Options of {@link apiKeys}. */
export interface ApiKeysOptions {
  /**
   * Key → owner. Keys should be long random strings (`sk-` + 32 random
   * bytes, say). A key may be given as `sha256:<64 hex digits>`, the
   * SHA-256 digest of the key, so that the configuration need not hold it
   * in clear. A tenant may have several keys at once (to rotate them).
   */
  keys: Readonly<Record<string, ApiKeyOwner>>;
  /** See {@link AuthOptions.publicRoutes}. */
  publicRoutes?: readonly string[];
}

// The one-shot `hash` costs about half of `createHash().update().digest()` on a key's few bytes (measured
// 1.3-2.6 µs against 3.2-4.7 µs), and every authenticated request digests its key once.
const digest = (key: string) => hash('sha256', key, 'buffer');
const HASHED_KEY = /^sha256:([0-9a-f]{64})$/i;

/** The digest a configured key is kept as: its own, or the one it was given as (`sha256:<hex>`). */
function configuredDigest(key: string, name: string): Buffer {
  if (typeof key !== 'string') throw new ConfigurationError({ message: `API key '${name}' is not a string` });
  const hashed = HASHED_KEY.exec(key);
  if (hashed) return Buffer.from(hashed[1] as string, 'hex');
  if (key.toLowerCase().startsWith('sha256:'))
    throw new ConfigurationError({ message: `API key '${name}' must be sha256: and 64 hex digits` });
  if (key.length < 16)
    throw new ConfigurationError({ message: 'API keys must be at least 16 characters long' });
  return digest(key);
}

/** The expiry of a key as epoch ms (undefined for none), refusing one that is not a date. */
function expiryOf(owner: ApiKeyOwner, name: string): number | undefined {
  if (owner.expiresAt === undefined) return undefined;
  const at = owner.expiresAt instanceof Date ? owner.expiresAt.getTime() : Date.parse(owner.expiresAt);
  if (Number.isNaN(at))
    throw new ConfigurationError({ message: `API key '${name}' has an expiresAt that is not a date` });
  return at;
}

/** The principal of a configured key, its scopes checked. */
function principalOf(owner: ApiKeyOwner, name: string): Principal {
  const principal: Principal = { tenantId: owner.tenantId, keyName: name };
  if (owner.userId) principal.userId = owner.userId;
  if (owner.scopes !== undefined) {
    const unknown = owner.scopes.filter((scope) => !KEY_SCOPES.includes(scope));
    if (unknown.length > 0) {
      throw new ConfigurationError({
        message: `API key '${name}' has unknown scopes ${unknown.join(', ')}; known: ${KEY_SCOPES.join(', ')}`,
      });
    }
    principal.scopes = [...owner.scopes];
  }
  if (owner.requestsPerMinute !== undefined) principal.requestsPerMinute = owner.requestsPerMinute;
  return principal;
}

/** The bearer token of a request, if it sent one. */
export function bearerToken(request: Request): string | undefined {
  const header = request.headers.get('authorization');
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

/**
 * Authentication with static API keys sent as `Authorization: Bearer <key>`.
 * Keys are kept only as SHA-256 digests (or given as such: `sha256:<hex>`)
 * and compared in constant time; they are never logged or traced (the key's
 * `name` is). A key past its `expiresAt` is refused (401).
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
  const owners: Array<{ digest: Buffer; principal: Principal; expiresAt: number | undefined }> = [];
  for (const [key, owner] of Object.entries(keys)) {
    if (!owner || typeof owner.tenantId !== 'string' || owner.tenantId === '') {
      throw new ConfigurationError({ message: `API key '${owner?.name ?? '(unnamed)'}' needs a tenantId` });
    }
    const name = owner.name ?? owner.tenantId;
    owners.push({
      digest: configuredDigest(key, name),
      principal: principalOf(owner, name),
      expiresAt: expiryOf(owner, name),
    });
  }
  if (owners.length === 0) throw new ConfigurationError({ message: 'apiKeys() needs at least one key' });
  const options: AuthOptions = {
    authenticate(request) {
      const token = bearerToken(request);
      if (token === undefined) return undefined;
      const presented = digest(token);
      // Every key is compared, in constant time, whichever matches: the time says nothing about the keys.
      let found: (typeof owners)[number] | undefined;
      for (const owner of owners) if (timingSafeEqual(owner.digest, presented)) found = owner;
      if (found?.expiresAt !== undefined && found.expiresAt <= Date.now()) return undefined;
      return found?.principal;
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
