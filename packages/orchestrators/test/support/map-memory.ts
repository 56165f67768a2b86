import type { Memory, MemoryResult, MemoryScope } from '@switchboard/core';

/** Who a memory belongs to: the namespace of each scope is derived from it. */
export interface MemoryOwner {
  sessionId: string;
  userId?: string;
}

/** Gives the memory of one scope for one owner, as the runtime's `RequestContext` does. */
export type MemoryProvider = (scope: MemoryScope, owner: MemoryOwner) => Memory;

function namespaceOf(scope: MemoryScope, { sessionId, userId }: MemoryOwner): string {
  if (scope === 'app') return 'app';
  if (scope === 'user' && userId) return `user:${userId}`;
  return `session:${sessionId}`;
}

/**
 * A Map-backed memory shared by every session that uses it, standing in for
 * the runtime's in-memory store. Each operation yields to the event loop first
 * (as a networked store would) and then reads and writes without yielding, so
 * `updateContent` is atomic under concurrent turns.
 */
export class MapMemory {
  readonly values = new Map<string, unknown>();

  /** A provider for `TestSession` and `RequestContext`. */
  readonly provider: MemoryProvider = (scope, owner) => this.bind(scope, namespaceOf(scope, owner));

  bind(scope: MemoryScope, namespace: string): Memory {
    const values = this.values;
    const at = (key: string) => `${namespace}\u0000${key}`;
    const settle = async <T>(operation: () => T): Promise<MemoryResult<T>> => {
      await new Promise((resolve) => setImmediate(resolve));
      return { success: true, data: operation() };
    };
    return {
      scope,
      getContent: <T>(key: string, defaultValue?: T) =>
        settle(() => (values.has(at(key)) ? (values.get(at(key)) as T) : defaultValue)),
      setContent: <T>(key: string, value: T) =>
        settle(() => {
          values.set(at(key), value);
          return value;
        }),
      deleteContent: (key: string) => settle(() => values.delete(at(key))),
      updateContent: <T>(key: string, fn: (current: T) => T, defaultValue: T) =>
        settle(() => {
          const next = fn(values.has(at(key)) ? (values.get(at(key)) as T) : defaultValue);
          values.set(at(key), next);
          return next;
        }),
    };
  }
}

/** A memory whose every operation fails with `error`, like a store that is down. */
export function failingMemory(error: Error): MemoryProvider {
  return (scope) => {
    const fail = async () => ({ success: false, error }) as const;
    return { scope, getContent: fail, setContent: fail, deleteContent: fail, updateContent: fail };
  };
}
