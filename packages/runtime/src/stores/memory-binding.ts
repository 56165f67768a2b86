import type { Memory, MemoryResult, MemoryScope } from '@switchboard/core';
import type { MemoryStore } from './memory-store.js';

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

// Takes the operation as a function: a store that throws before returning a promise is a failure too.
async function settle<T>(operation: () => Promise<T>): Promise<MemoryResult<T>> {
  try {
    return { success: true, data: await operation() };
  } catch (error) {
    return { success: false, error: toError(error) };
  }
}

/** The identifiers a memory namespace is derived from. */
export interface MemoryOwner {
  sessionId: string;
  userId?: string;
  tenantId?: string;
}

/**
 * The namespace of a scope: `session:<id>`, `user:<id>` or `app`, prefixed
 * with `tenant:<id>:` when a tenant is set. Without a user id, the user scope
 * falls back to the session so that anonymous users never share memory.
 */
export function memoryNamespace(scope: MemoryScope, { sessionId, userId, tenantId }: MemoryOwner): string {
  const tenant = tenantId ? `tenant:${tenantId}:` : '';
  switch (scope) {
    case 'app':
      return `${tenant}app`;
    case 'user':
      return userId ? `${tenant}user:${userId}` : `${tenant}session:${sessionId}`;
    default:
      return `${tenant}session:${sessionId}`;
  }
}

/**
 * Where the ids of a user's sessions are kept (by the engine, for deleting
 * the user's data): beside the user's memory, not in it.
 */
export function userSessionsNamespace(userId: string, tenantId?: string): string {
  return `${tenantId ? `tenant:${tenantId}:` : ''}user-sessions:${userId}`;
}

/** Options of {@link bindMemory}. */
export interface BindMemoryOptions {
  /**
   * Time to live of every write that sets none of its own; such values are
   * written `renewable`, so that `MemoryStore.touch` extends them. The runtime
   * uses the session idle time for session memory and touches it as the
   * session is used, so session memory lives as long as its session.
   */
  defaultTtlSeconds?: number;
}

/** Binds a {@link MemoryStore} to one namespace, as the result-valued {@link Memory} API. */
export function bindMemory(
  store: MemoryStore,
  scope: MemoryScope,
  namespace: string,
  { defaultTtlSeconds }: BindMemoryOptions = {},
): Memory {
  // A value without its own ttl follows the scope's lifetime: renewable, so that use of the session extends it.
  const scopeLifetime =
    defaultTtlSeconds === undefined ? undefined : { ttlSeconds: defaultTtlSeconds, renewable: true };
  const withTtl = (options?: { ttlSeconds?: number }) =>
    scopeLifetime === undefined || options?.ttlSeconds !== undefined ? options : scopeLifetime;
  return {
    scope,
    getContent: async <T>(key: string, defaultValue?: T) => {
      const result = await settle(() => store.get(namespace, key));
      if (result.success && result.data === undefined) return { success: true, data: defaultValue };
      return result as MemoryResult<T | undefined>;
    },
    setContent: <T>(key: string, value: T, options?: { ttlSeconds?: number }) =>
      settle(async () => {
        await store.set(namespace, key, value, withTtl(options));
        return value;
      }),
    deleteContent: (key: string) => settle(() => store.delete(namespace, key)),
    updateContent: <T>(
      key: string,
      fn: (current: T) => T,
      defaultValue: T,
      options?: { ttlSeconds?: number },
    ) => settle(() => store.update(namespace, key, fn, defaultValue, withTtl(options))),
  };
}
