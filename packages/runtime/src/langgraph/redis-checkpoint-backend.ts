import type { Redis } from 'ioredis';
import { RedisScript } from '../stores/redis/redis-script.js';
import type {
  CheckpointBackend,
  LoadedCheckpoint,
  StoredCheckpoint,
  StoredValue,
  StoredWrite,
  ThreadRef,
} from './checkpoint-backend.js';

/** Options of {@link redisCheckpointBackend}. */
export interface RedisCheckpointBackendOptions {
  /** Prepended to every key (default `switchboard:`). */
  keyPrefix?: string;
  /** A thread's keys expire this long after its last checkpoint (default 604 800: a week; `null`: never). */
  ttlSeconds?: number | null;
}

/** A stored write as Redis keeps it: `[channel, type, data, taskPath]`. */
type WriteRecord = [channel: string, type: string, data: string, taskPath: string];
/** A checkpoint as Redis keeps it. */
interface CheckpointRecord {
  c: StoredValue;
  m: StoredValue;
  r: readonly string[];
  p?: string;
}

const RELEASE = `
local function release(refs)
  for _, field in ipairs(refs) do
    if redis.call('HINCRBY', KEYS[5], field, -1) <= 0 then
      redis.call('HDEL', KEYS[5], field)
      redis.call('HDEL', KEYS[4], field)
    end
  end
end`;

/**
 * KEYS: namespaces, ids, checkpoints, blobs, refs, writes.
 * ARGV: namespace, id, record, maxCheckpoints, ttl, blob count, then field/value pairs.
 */
const PUT = new RedisScript(`${RELEASE}
local id = ARGV[2]
local blobs = tonumber(ARGV[6])
for i = 0, blobs - 1 do
  redis.call('HSET', KEYS[4], ARGV[7 + 2 * i], ARGV[8 + 2 * i])
end
for _, field in ipairs(cjson.decode(ARGV[3]).r) do
  if redis.call('HEXISTS', KEYS[4], field) == 1 then redis.call('HINCRBY', KEYS[5], field, 1) end
end
-- The same id stored again: its old references go after the new ones are counted, so shared blobs stay.
local previous = redis.call('HGET', KEYS[3], id)
if previous then release(cjson.decode(previous).r) end
redis.call('HSET', KEYS[3], id, ARGV[3])
redis.call('ZADD', KEYS[2], 0, id)
local added = redis.call('SADD', KEYS[1], ARGV[1])
local excess = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[4])
if excess > 0 then
  for _, old in ipairs(redis.call('ZRANGE', KEYS[2], 0, excess - 1)) do
    local record = redis.call('HGET', KEYS[3], old)
    if record then release(cjson.decode(record).r) end
    redis.call('HDEL', KEYS[3], old)
    redis.call('HDEL', KEYS[6], old)
    redis.call('ZREM', KEYS[2], old)
  end
end
local ttl = tonumber(ARGV[5])
if ttl > 0 then
  for i = 1, 6 do redis.call('EXPIRE', KEYS[i], ttl) end
end
return added`);

/** KEYS: ids, checkpoints, blobs, writes. ARGV: id ('' for the newest). Returns [id, record, writes, blob values…]. */
const LOAD = new RedisScript(`
local id = ARGV[1]
if id == '' then
  id = redis.call('ZREVRANGE', KEYS[1], 0, 0)[1]
  if not id then return false end
end
local record = redis.call('HGET', KEYS[2], id)
if not record then return false end
local refs = cjson.decode(record).r
local reply = { id, record, redis.call('HGET', KEYS[4], id) or '' }
if #refs > 0 then
  for _, value in ipairs(redis.call('HMGET', KEYS[3], unpack(refs))) do table.insert(reply, value) end
end
return reply`);

/** KEYS: writes, namespaces. ARGV: id, ttl, then field/value/overwrite triples. Merges into the checkpoint's writes. */
const PUT_WRITES = new RedisScript(`
local stored = redis.call('HGET', KEYS[1], ARGV[1])
local writes = stored and cjson.decode(stored) or {}
for i = 3, #ARGV, 3 do
  if ARGV[i + 2] == '1' or writes[ARGV[i]] == nil then writes[ARGV[i]] = cjson.decode(ARGV[i + 1]) end
end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(writes))
local ttl = tonumber(ARGV[2])
if ttl > 0 and redis.call('TTL', KEYS[1]) < 0 then redis.call('EXPIRE', KEYS[1], ttl) end
return 1`);

function tenantTag(tenant: string | undefined): string {
  return tenant === undefined ? 'none' : `t:${encodeURIComponent(tenant)}`;
}

function parseWrites(json: string): StoredWrite[] {
  if (json === '') return [];
  return Object.entries(JSON.parse(json) as Record<string, WriteRecord>).map(([field, write]) => {
    const bar = field.indexOf('|');
    const [channel, type, data, taskPath] = write;
    return {
      idx: Number(field.slice(0, bar)),
      taskId: field.slice(bar + 1),
      channel,
      value: [type, data],
      taskPath,
    };
  });
}

/**
 * Keeps LangGraph checkpoints in Redis for {@link SwitchboardCheckpointSaver},
 * so that every replica sees a thread's state: plain Redis (no RedisJSON or
 * RediSearch), one hash tag per thread (Cluster-safe), each call one script
 * or one round trip. Keys: `<prefix>lg:{<tenant>:<thread>}:…`, expiring
 * `ttlSeconds` after the thread's last checkpoint. Pass a client you own: the
 * backend never quits it.
 */
export function redisCheckpointBackend(
  client: Redis,
  { keyPrefix = 'switchboard:', ttlSeconds = 604_800 }: RedisCheckpointBackendOptions = {},
): CheckpointBackend {
  const ttl = ttlSeconds ?? 0;
  const base = ({ tenant, threadId }: ThreadRef) =>
    `${keyPrefix}lg:{${tenantTag(tenant)}:${encodeURIComponent(threadId)}}`;
  const threadIndex = (tenant: string | undefined) => `${keyPrefix}lg-threads:{${tenantTag(tenant)}}`;
  const keys = (thread: ThreadRef, namespace: string) => {
    const root = base(thread);
    const ns = encodeURIComponent(namespace);
    return {
      namespaces: `${root}:ns`,
      ids: `${root}:ids:${ns}`,
      checkpoints: `${root}:cp:${ns}`,
      blobs: `${root}:blobs:${ns}`,
      refs: `${root}:refs:${ns}`,
      writes: `${root}:w:${ns}`,
    };
  };

  return {
    async put(thread, namespace, { checkpoint, blobs, maxCheckpoints }) {
      const k = keys(thread, namespace);
      const record: CheckpointRecord = {
        c: checkpoint.checkpoint,
        m: checkpoint.metadata,
        r: checkpoint.refs,
        ...(checkpoint.parentId === undefined ? {} : { p: checkpoint.parentId }),
      };
      const blobArgs: string[] = [];
      for (const [field, value] of blobs) blobArgs.push(field, JSON.stringify(value));
      const added = await PUT.run(
        client,
        [k.namespaces, k.ids, k.checkpoints, k.blobs, k.refs, k.writes],
        [namespace, checkpoint.id, JSON.stringify(record), maxCheckpoints, ttl, blobs.size, ...blobArgs],
      );
      if (added === 1) {
        // A new namespace of the thread: list it in the tenant's thread index (its own hash tag, so its own call).
        const index = threadIndex(thread.tenant);
        await client
          .multi()
          .sadd(index, thread.threadId)
          .expire(index, ttl > 0 ? ttl : 2 ** 31 - 1)
          .exec();
      }
    },
    async load(thread, namespace, id): Promise<LoadedCheckpoint | undefined> {
      const k = keys(thread, namespace);
      const reply = (await LOAD.run(client, [k.ids, k.checkpoints, k.blobs, k.writes], [id ?? ''])) as
        | (string | null)[]
        | null;
      if (!reply) return undefined;
      const record = JSON.parse(reply[1] as string) as CheckpointRecord;
      const checkpoint: StoredCheckpoint = {
        id: reply[0] as string,
        checkpoint: record.c,
        metadata: record.m,
        refs: record.r,
      };
      if (record.p !== undefined) checkpoint.parentId = record.p;
      const blobs = new Map<string, StoredValue>();
      record.r.forEach((field, index) => {
        const value = reply[3 + index];
        if (typeof value === 'string') blobs.set(field, JSON.parse(value) as StoredValue);
      });
      return { checkpoint, writes: parseWrites(reply[2] ?? ''), blobs };
    },
    async writes(thread, namespace, id) {
      return parseWrites((await client.hget(keys(thread, namespace).writes, id)) ?? '');
    },
    async putWrites(thread, namespace, id, writes) {
      const k = keys(thread, namespace);
      const args: string[] = [id, String(ttl)];
      for (const write of writes) {
        const record: WriteRecord = [write.channel, write.value[0], write.value[1], write.taskPath];
        args.push(`${write.idx}|${write.taskId}`, JSON.stringify(record), write.idx < 0 ? '1' : '0');
      }
      await PUT_WRITES.run(client, [k.writes, k.namespaces], args);
    },
    async ids(thread, namespace, before) {
      return client.zrevrangebylex(
        keys(thread, namespace).ids,
        before === undefined ? '+' : `(${before}`,
        '-',
      );
    },
    async namespaces(thread) {
      return client.smembers(keys(thread, '').namespaces);
    },
    async threads(tenant) {
      // The index outlives threads that expired: drop those as they are found.
      const index = threadIndex(tenant);
      const listed = await client.smembers(index);
      if (listed.length === 0) return [];
      const alive = await Promise.all(
        listed.map((threadId) => client.exists(keys({ tenant, threadId }, '').namespaces)),
      );
      const gone = listed.filter((_, position) => alive[position] === 0);
      if (gone.length > 0) await client.srem(index, ...gone);
      return listed.filter((_, position) => alive[position] === 1);
    },
    async deleteThread(thread) {
      const namespaces = await client.smembers(keys(thread, '').namespaces);
      const doomed = namespaces.flatMap((namespace) => {
        const { namespaces: _, ...rest } = keys(thread, namespace);
        return Object.values(rest);
      });
      await client
        .multi()
        .del(keys(thread, '').namespaces, ...doomed)
        .exec();
      await client.srem(threadIndex(thread.tenant), thread.threadId);
    },
  };
}
