import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  compareWritesSortKeys,
  copyCheckpoint,
  maxChannelVersion,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
  writesSortKey,
} from '@langchain/langgraph-checkpoint';
import { RequestContext, ValidationError } from '@switchboard/core';
import {
  blobField,
  type CheckpointBackend,
  type LoadedCheckpoint,
  type StoredValue,
  type StoredWrite,
  type ThreadRef,
} from './checkpoint-backend.js';

/** Options of {@link SwitchboardCheckpointSaver}. */
export interface SwitchboardCheckpointSaverOptions {
  /** Where checkpoints live: `memoryCheckpointBackend()` or `redisCheckpointBackend(redis)`. */
  backend: CheckpointBackend;
  /** Checkpoints kept per thread and namespace; older ones are pruned (default 100). */
  maxCheckpoints?: number;
  /** The largest `put`: the checkpoint, its metadata and its changed channel values, serialized (default 4 MiB). */
  maxCheckpointBytes?: number;
  /** The largest `putWrites` call, serialized (default 1 MiB). */
  maxWriteBytes?: number;
  /** LangGraph's serializer (default: its JSON-plus serializer). */
  serde?: SerializerProtocol;
}

const utf8 = new TextDecoder();
const MARKER = Symbol.for('switchboard.checkpointSaver');

/**
 * A LangGraph checkpointer (`BaseCheckpointSaver`) over Switchboard's
 * stores, in memory or on plain Redis (no modules). Every thread belongs to
 * the tenant of the request that writes or reads it
 * (`RequestContext.current().tenantId`), so two tenants' threads of the same
 * id never meet. Bounded: at most `maxCheckpoints` per thread namespace (the
 * oldest are pruned), `maxCheckpointBytes` per checkpoint and
 * `maxWriteBytes` per `putWrites`; a larger one fails with a
 * `ValidationError` and stores nothing. Channel values are stored once per
 * version and shared by the checkpoints that refer to them.
 *
 * Passes `@langchain/langgraph-checkpoint-validation` (see the runtime's tests).
 *
 * @example
 * ```ts
 * const checkpointer = new SwitchboardCheckpointSaver({ backend: redisCheckpointBackend(redis) });
 * const graph = new StateGraph(MessagesAnnotation).addNode(…).compile({ checkpointer });
 * ```
 */
export class SwitchboardCheckpointSaver extends BaseCheckpointSaver {
  readonly #backend: CheckpointBackend;
  readonly #maxCheckpoints: number;
  readonly #maxCheckpointBytes: number;
  readonly #maxWriteBytes: number;
  readonly [MARKER] = true;

  constructor({
    backend,
    maxCheckpoints = 100,
    maxCheckpointBytes = 4 * 1024 * 1024,
    maxWriteBytes = 1024 * 1024,
    serde,
  }: SwitchboardCheckpointSaverOptions) {
    super(serde);
    if (!Number.isInteger(maxCheckpoints) || maxCheckpoints < 1) {
      throw new ValidationError({ message: 'maxCheckpoints must be a positive integer' });
    }
    this.#backend = backend;
    this.#maxCheckpoints = maxCheckpoints;
    this.#maxCheckpointBytes = maxCheckpointBytes;
    this.#maxWriteBytes = maxWriteBytes;
  }

  /** True for a {@link SwitchboardCheckpointSaver} from any copy of the package: its threads are tenant-scoped. */
  static isInstance(value: unknown): value is SwitchboardCheckpointSaver {
    return typeof value === 'object' && value !== null && (value as { [MARKER]?: unknown })[MARKER] === true;
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config.configurable?.thread_id as string | undefined;
    if (threadId === undefined) return undefined;
    const thread = threadOf(threadId);
    const namespace = (config.configurable?.checkpoint_ns as string | undefined) ?? '';
    const id = (config.configurable?.checkpoint_id as string | undefined) || undefined;
    const loaded = await this.#backend.load(thread, namespace, id);
    return loaded && this.#tuple(thread, namespace, loaded);
  }

  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { before, filter } = options;
    let remaining = options.limit ?? Number.POSITIVE_INFINITY;
    const tenant = tenantOf();
    const threadId = config.configurable?.thread_id as string | undefined;
    const wantedNamespace = config.configurable?.checkpoint_ns as string | undefined;
    const wantedId = config.configurable?.checkpoint_id as string | undefined;
    const beforeId = before?.configurable?.checkpoint_id as string | undefined;
    const threadIds = threadId === undefined ? await this.#backend.threads(tenant) : [threadId];
    for (const id of threadIds) {
      const thread = { tenant, threadId: id };
      const namespaces =
        wantedNamespace === undefined ? await this.#backend.namespaces(thread) : [wantedNamespace];
      for (const namespace of namespaces) {
        for (const checkpointId of await this.#backend.ids(thread, namespace, beforeId)) {
          if (remaining <= 0) return;
          if (wantedId && checkpointId !== wantedId) continue;
          const loaded = await this.#backend.load(thread, namespace, checkpointId);
          if (loaded === undefined) continue;
          const tuple = await this.#tuple(thread, namespace, loaded);
          const metadata = (tuple.metadata ?? {}) as Record<string, unknown>;
          if (filter && !Object.entries(filter).every(([key, value]) => metadata[key] === value)) continue;
          remaining -= 1;
          yield tuple;
        }
      }
    }
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const threadId = requireThreadId(config, 'put a checkpoint');
    const namespace = (config.configurable?.checkpoint_ns as string | undefined) ?? '';
    const parentId = config.configurable?.checkpoint_id as string | undefined;
    const { channel_values: values, ...body } = copyCheckpoint(checkpoint);
    const blobs = new Map<string, StoredValue>();
    let bytes = 0;
    for (const [channel, version] of Object.entries(newVersions)) {
      if (!(channel in values) || !(channel in checkpoint.channel_versions)) continue;
      const stored = await this.#dump(values[channel]);
      bytes += stored[1].length;
      blobs.set(blobField(channel, version), stored);
    }
    const stored = {
      id: checkpoint.id,
      checkpoint: await this.#dump({ ...body, channel_values: {} }),
      metadata: await this.#dump(metadata),
      refs: Object.entries(checkpoint.channel_versions).map(([channel, version]) =>
        blobField(channel, version),
      ),
      ...(parentId ? { parentId } : {}),
    };
    bytes += stored.checkpoint[1].length + stored.metadata[1].length;
    if (bytes > this.#maxCheckpointBytes) {
      throw new ValidationError({
        message: `A LangGraph checkpoint of ${bytes} bytes exceeds the limit of ${this.#maxCheckpointBytes} bytes`,
      });
    }
    await this.#backend.put(threadOf(threadId), namespace, {
      checkpoint: stored,
      blobs,
      maxCheckpoints: this.#maxCheckpoints,
    });
    return { configurable: { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: checkpoint.id } };
  }

  async putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath = '',
  ): Promise<void> {
    const threadId = requireThreadId(config, 'put writes');
    const checkpointId = config.configurable?.checkpoint_id as string | undefined;
    if (!checkpointId) throw new ValidationError({ message: 'Cannot put writes without a checkpoint_id' });
    const namespace = (config.configurable?.checkpoint_ns as string | undefined) ?? '';
    let bytes = 0;
    const stored: StoredWrite[] = [];
    for (const [index, [channel, value]] of writes.entries()) {
      const dumped = await this.#dump(value);
      bytes += dumped[1].length;
      stored.push({ taskId, idx: WRITES_IDX_MAP[channel] ?? index, channel, value: dumped, taskPath });
    }
    if (bytes > this.#maxWriteBytes) {
      throw new ValidationError({
        message: `LangGraph writes of ${bytes} bytes exceed the limit of ${this.#maxWriteBytes} bytes`,
      });
    }
    await this.#backend.putWrites(threadOf(threadId), namespace, checkpointId, stored);
  }

  async deleteThread(threadId: string): Promise<void> {
    await this.#backend.deleteThread(threadOf(threadId));
  }

  async #tuple(thread: ThreadRef, namespace: string, loaded: LoadedCheckpoint): Promise<CheckpointTuple> {
    const { checkpoint: stored, writes, blobs } = loaded;
    const checkpoint = (await this.#load(stored.checkpoint)) as Checkpoint;
    for (const [channel, version] of Object.entries(checkpoint.channel_versions)) {
      const blob = blobs.get(blobField(channel, version));
      if (blob !== undefined) checkpoint.channel_values[channel] = await this.#load(blob);
    }
    if (checkpoint.v < 4 && stored.parentId !== undefined) {
      await this.#migratePendingSends(checkpoint, thread, namespace, stored.parentId);
    }
    const configurable = { thread_id: thread.threadId, checkpoint_ns: namespace };
    const tuple: CheckpointTuple = {
      config: { configurable: { ...configurable, checkpoint_id: stored.id } },
      checkpoint,
      metadata: (await this.#load(stored.metadata)) as CheckpointMetadata,
      pendingWrites: await this.#pendingWrites(writes),
    };
    if (stored.parentId !== undefined) {
      tuple.parentConfig = { configurable: { ...configurable, checkpoint_id: stored.parentId } };
    }
    return tuple;
  }

  /** Checkpoints of format 3 and older kept their pending sends as the parent's writes: move them into the checkpoint. */
  async #migratePendingSends(
    checkpoint: Checkpoint,
    thread: ThreadRef,
    namespace: string,
    parentId: string,
  ): Promise<void> {
    const parentWrites = await this.#backend.writes(thread, namespace, parentId);
    const sends = await Promise.all(
      sortWrites(parentWrites)
        .filter((write) => write.channel === TASKS)
        .map((write) => this.#load(write.value)),
    );
    checkpoint.channel_values[TASKS] = sends;
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] =
      versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }

  async #pendingWrites(writes: readonly StoredWrite[]): Promise<CheckpointPendingWrite[]> {
    return Promise.all(
      sortWrites(writes).map(
        async (write): Promise<CheckpointPendingWrite> => [
          write.taskId,
          write.channel,
          await this.#load(write.value),
        ],
      ),
    );
  }

  async #dump(value: unknown): Promise<StoredValue> {
    const [type, bytes] = await this.serde.dumpsTyped(value);
    return type === 'json' ? [type, utf8.decode(bytes)] : [type, Buffer.from(bytes).toString('base64')];
  }

  #load([type, data]: StoredValue): Promise<unknown> {
    return this.serde.loadsTyped(type, type === 'json' ? data : new Uint8Array(Buffer.from(data, 'base64')));
  }
}

function sortWrites(writes: readonly StoredWrite[]): StoredWrite[] {
  return [...writes].sort((a, b) =>
    compareWritesSortKeys(
      writesSortKey(a.taskPath, a.taskId, a.idx),
      writesSortKey(b.taskPath, b.taskId, b.idx),
    ),
  );
}

function tenantOf(): string | undefined {
  return RequestContext.tryCurrent()?.tenantId;
}

function threadOf(threadId: string): ThreadRef {
  return { tenant: tenantOf(), threadId };
}

function requireThreadId(config: RunnableConfig, action: string): string {
  const threadId = config.configurable?.thread_id as unknown;
  if (typeof threadId !== 'string' || threadId === '') {
    throw new ValidationError({ message: `Cannot ${action} without a configurable.thread_id` });
  }
  return threadId;
}
