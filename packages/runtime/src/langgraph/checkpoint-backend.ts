/**
 * The storage contract under {@link SwitchboardCheckpointSaver}: what the
 * in-memory and the Redis backends store for a LangGraph thread. Types only.
 *
 * A checkpoint is stored without its channel values; each value lives once,
 * as a blob under `channel + version`, counted by the checkpoints that refer
 * to it, so consecutive checkpoints share what did not change and pruning a
 * checkpoint frees the blobs nobody else refers to.
 *
 * @module
 */

/** A value as the saver's serializer wrote it: its type and its text (UTF-8 for `json`, else base64). */
export type StoredValue = readonly [type: string, data: string];

/** One thread of one tenant (`tenant` undefined: requests without a tenant). */
export interface ThreadRef {
  tenant: string | undefined;
  threadId: string;
}

/** A checkpoint as stored: its serialized body (without channel values) and metadata, and its parent. */
export interface StoredCheckpoint {
  id: string;
  parentId?: string;
  checkpoint: StoredValue;
  metadata: StoredValue;
  /** The blob fields (see {@link blobField}) of every channel version the checkpoint refers to. */
  refs: readonly string[];
}

/** One pending write against a checkpoint. */
export interface StoredWrite {
  taskId: string;
  /** The write's index in its `putWrites` call, or LangGraph's negative index for special channels. */
  idx: number;
  channel: string;
  value: StoredValue;
  taskPath: string;
}

/** What `put` stores beside the checkpoint itself. */
export interface CheckpointPut {
  checkpoint: StoredCheckpoint;
  /** The new blobs: field → value. */
  blobs: ReadonlyMap<string, StoredValue>;
  /** The thread namespace keeps at most this many checkpoints: the oldest beyond are pruned. */
  maxCheckpoints: number;
}

/** A checkpoint with its pending writes and the blobs it refers to, as `load` returns it. */
export interface LoadedCheckpoint {
  checkpoint: StoredCheckpoint;
  writes: StoredWrite[];
  /** Blob field → value, for the fields of `refs` that are stored. */
  blobs: ReadonlyMap<string, StoredValue>;
}

/** Where {@link SwitchboardCheckpointSaver} keeps its data: in memory, or in Redis. */
export interface CheckpointBackend {
  put(thread: ThreadRef, namespace: string, put: CheckpointPut): Promise<void>;
  /** The checkpoint `id`, or the thread namespace's newest with `id` undefined, with its writes and blobs. */
  load(thread: ThreadRef, namespace: string, id: string | undefined): Promise<LoadedCheckpoint | undefined>;
  /** The pending writes against checkpoint `id`. */
  writes(thread: ThreadRef, namespace: string, id: string): Promise<StoredWrite[]>;
  /** Adds writes; a write whose `taskId` and non-negative `idx` are stored already is kept as it was. */
  putWrites(thread: ThreadRef, namespace: string, id: string, writes: readonly StoredWrite[]): Promise<void>;
  /** The checkpoint ids of a thread namespace, newest first, below `before` when given. */
  ids(thread: ThreadRef, namespace: string, before: string | undefined): Promise<string[]>;
  /** The namespaces the thread has checkpoints in. */
  namespaces(thread: ThreadRef): Promise<string[]>;
  /** The tenant's threads that have checkpoints. */
  threads(tenant: string | undefined): Promise<string[]>;
  deleteThread(thread: ThreadRef): Promise<void>;
}

/** The blob field of one channel version: `["channel","version"]`, unambiguous and readable by Redis's Lua JSON. */
export function blobField(channel: string, version: string | number): string {
  return JSON.stringify([channel, String(version)]);
}
