/**
 * Key layout. Ids and namespaces are URI-encoded, so they never contain the
 * `:`, `{` or `}` that delimit the parts: `a` + `b:c` and `a:b` + `c` cannot
 * collide. The encoded id sits in a `{hash tag}`, which keeps all keys of one
 * session (or one memory namespace) in the same cluster slot, so pipelines,
 * transactions and scripts over them stay valid on Redis Cluster.
 */

/** The keys of one session. */
export interface SessionKeys {
  /** A list of message records, oldest first. */
  messages: string;
  /** A list of turn records, oldest first. */
  turns: string;
  /** The lease token, with the lease's ttl as the key's expiry. */
  lease: string;
  /** A hash of the `Idempotency-Key`s seen: key → "turnId fingerprint". */
  requests: string;
}

/** The keys of one session under `prefix`. */
export function sessionKeys(prefix: string, sessionId: string): SessionKeys {
  const base = `${prefix}session:{${encodeURIComponent(sessionId)}}`;
  return {
    messages: `${base}:messages`,
    turns: `${base}:turns`,
    lease: `${base}:lease`,
    requests: `${base}:requests`,
  };
}

/**
 * The sorted set of a tenant's sessions (without auth: of the sessions that
 * have no tenant), scored by when each last started a turn. Its own hash tag:
 * it is written beside a session's keys, never in the same script.
 */
export function sessionIndexKey(prefix: string, tenant: string | undefined): string {
  return `${prefix}sessions:{${tenant === undefined ? 'none' : `t:${encodeURIComponent(tenant)}`}}`;
}

/** The keys of one memory namespace. */
export interface MemoryKeys {
  /** A set of the namespace's keys, so `clear` never scans the keyspace. */
  index: string;
  /** What precedes a memory key in its Redis key. */
  valuePrefix: string;
  /** A set of the keys that follow the namespace's lifetime (extended by `touch`). */
  renewable: string;
}

/** The namespace of a session's memory (`memoryNamespace`): `session:<id>`, or `tenant:<tenant>:session:<id>`. */
const SESSION_NAMESPACE = /^(?:tenant:(.*?):)?session:(.+)$/s;

/**
 * The keys of one memory namespace under `prefix`. A session's memory lives
 * beside the session's own keys, under the same hash tag (so on a Redis
 * Cluster in the same slot, and on the same node): `<prefix>session:{<id>}:memory`.
 * Other namespaces have a tag of their own: `<prefix>memory:{<namespace>}`.
 * (A tenant id holding `:session:` may parse differently, which only moves
 * its sessions' memory to a tag of its own: keys stay distinct.)
 */
export function memoryKeys(prefix: string, namespace: string): MemoryKeys {
  const session = SESSION_NAMESPACE.exec(namespace);
  if (session) {
    const [, tenant, sessionId = ''] = session;
    const storeId = tenant === undefined ? sessionId : `${encodeURIComponent(tenant)}/${sessionId}`;
    const index = `${prefix}session:{${encodeURIComponent(storeId)}}:memory`;
    return { index, valuePrefix: `${index}:`, renewable: `${index}-renewable` };
  }
  return legacyMemoryKeys(prefix, namespace);
}

/**
 * The keys of a memory namespace as versions before 0.2 laid them out (and
 * as non-session namespaces still are): `<prefix>memory:{<namespace>}`. See
 * `migrateSessionMemory`.
 */
export function legacyMemoryKeys(prefix: string, namespace: string): MemoryKeys {
  const tag = `{${encodeURIComponent(namespace)}}`;
  const index = `${prefix}memory:${tag}`;
  // Outside the value-key space (`${index}:…`), so no memory key can collide with it.
  return { index, valuePrefix: `${index}:`, renewable: `${prefix}memory-renewable:${tag}` };
}

/**
 * A replica's liveness key (see `ReplicaLiveness`): present while the replica
 * runs. Its own hash tag: it is read and written apart from any session's keys.
 */
export function replicaLivenessKey(prefix: string, replicaId: string): string {
  return `${prefix}replica:{${encodeURIComponent(replicaId)}}`;
}
