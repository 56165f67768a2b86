import type {
  CheckpointBackend,
  CheckpointPut,
  LoadedCheckpoint,
  StoredCheckpoint,
  StoredValue,
  StoredWrite,
  ThreadRef,
} from './checkpoint-backend.js';

/** Options of {@link memoryCheckpointBackend}. */
export interface MemoryCheckpointBackendOptions {
  /** Threads kept across all tenants; the least recently written beyond are dropped (default 10 000). */
  maxThreads?: number;
}

interface Namespace {
  checkpoints: Map<string, StoredCheckpoint>;
  writes: Map<string, Map<string, StoredWrite>>;
  blobs: Map<string, { value: StoredValue; refs: number }>;
}

type Thread = Map<string, Namespace>;

function threadKey({ tenant, threadId }: ThreadRef): string {
  return JSON.stringify([tenant ?? null, threadId]);
}

/**
 * Keeps LangGraph checkpoints in this process's memory, for
 * {@link SwitchboardCheckpointSaver} in tests and single-process apps: lost
 * on restart and not shared between replicas (use the Redis backend there).
 * Bounded by `maxThreads` and the saver's limits.
 */
export function memoryCheckpointBackend({
  maxThreads = 10_000,
}: MemoryCheckpointBackendOptions = {}): CheckpointBackend {
  /** In order of last write: the first is the one dropped. */
  const threads = new Map<string, Thread>();

  const namespaceOf = (thread: ThreadRef, name: string): Namespace | undefined =>
    threads.get(threadKey(thread))?.get(name);

  const writable = (thread: ThreadRef, name: string): Namespace => {
    const key = threadKey(thread);
    const found = threads.get(key) ?? new Map<string, Namespace>();
    threads.delete(key);
    threads.set(key, found);
    if (threads.size > maxThreads) threads.delete(threads.keys().next().value as string);
    let namespace = found.get(name);
    if (namespace === undefined) {
      namespace = { checkpoints: new Map(), writes: new Map(), blobs: new Map() };
      found.set(name, namespace);
    }
    return namespace;
  };

  const release = (namespace: Namespace, refs: readonly string[]): void => {
    for (const field of refs) {
      const blob = namespace.blobs.get(field);
      if (blob !== undefined && --blob.refs <= 0) namespace.blobs.delete(field);
    }
  };

  const sortedIds = (namespace: Namespace): string[] => [...namespace.checkpoints.keys()].sort();

  return {
    async put(thread, name, { checkpoint, blobs, maxCheckpoints }: CheckpointPut) {
      const namespace = writable(thread, name);
      for (const [field, value] of blobs) {
        const blob = namespace.blobs.get(field);
        if (blob === undefined) namespace.blobs.set(field, { value, refs: 0 });
        else blob.value = value;
      }
      for (const field of checkpoint.refs) {
        const blob = namespace.blobs.get(field);
        if (blob !== undefined) blob.refs += 1;
      }
      const previous = namespace.checkpoints.get(checkpoint.id);
      if (previous !== undefined) release(namespace, previous.refs);
      namespace.checkpoints.set(checkpoint.id, checkpoint);
      if (namespace.checkpoints.size > maxCheckpoints) {
        for (const id of sortedIds(namespace).slice(0, namespace.checkpoints.size - maxCheckpoints)) {
          release(namespace, namespace.checkpoints.get(id)?.refs ?? []);
          namespace.checkpoints.delete(id);
          namespace.writes.delete(id);
        }
      }
    },
    async load(thread, name, id): Promise<LoadedCheckpoint | undefined> {
      const namespace = namespaceOf(thread, name);
      if (namespace === undefined) return undefined;
      const checkpointId = id ?? sortedIds(namespace).at(-1);
      const found = checkpointId === undefined ? undefined : namespace.checkpoints.get(checkpointId);
      if (found === undefined) return undefined;
      const blobs = new Map<string, StoredValue>();
      for (const field of found.refs) {
        const blob = namespace.blobs.get(field);
        if (blob !== undefined) blobs.set(field, blob.value);
      }
      return { checkpoint: found, writes: [...(namespace.writes.get(found.id)?.values() ?? [])], blobs };
    },
    async writes(thread, name, id) {
      return [...(namespaceOf(thread, name)?.writes.get(id)?.values() ?? [])];
    },
    async putWrites(thread, name, id, writes) {
      const namespace = writable(thread, name);
      let stored = namespace.writes.get(id);
      if (stored === undefined) {
        stored = new Map();
        namespace.writes.set(id, stored);
      }
      for (const write of writes) {
        const field = `${write.taskId}\u0000${write.idx}`;
        if (write.idx >= 0 && stored.has(field)) continue;
        stored.set(field, write);
      }
    },
    async ids(thread, name, before) {
      const namespace = namespaceOf(thread, name);
      if (namespace === undefined) return [];
      const ids = sortedIds(namespace).reverse();
      return before === undefined ? ids : ids.filter((id) => id < before);
    },
    async namespaces(thread) {
      return [...(threads.get(threadKey(thread))?.keys() ?? [])];
    },
    async threads(tenant) {
      const wanted = tenant ?? null;
      const found: string[] = [];
      for (const key of threads.keys()) {
        const [owner, threadId] = JSON.parse(key) as [string | null, string];
        if (owner === wanted) found.push(threadId);
      }
      return found;
    },
    async deleteThread(thread) {
      threads.delete(threadKey(thread));
    },
  };
}
