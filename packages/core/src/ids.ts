import { randomBytes, randomUUID } from 'node:crypto';

// A random tag per process plus a counter: unique across replicas, and cheap enough for the turn path.
// 62 random bits in 12 base-36 digits: ids are stored with every message and step, so each digit counts.
const PROCESS_TAG = (randomBytes(8).readBigUInt64BE() >> 2n).toString(36).padStart(12, '0').slice(-12);
let counter = 0;

/**
 * Creates a unique id with an optional readable prefix, e.g. `call_9f2c…_1a`.
 * Ids are unique across processes but predictable within one: use
 * {@link createSecretId} for ids that grant access, such as session ids.
 * @param prefix - a short tag such as `msg`, `call` or `turn`.
 */
export function createId(prefix?: string): string {
  const id = (prefix ? (heads.get(prefix) ?? head(prefix)) : PROCESS_TAG) + (counter++).toString(36);
  // Reading a character makes V8 store the id as one flat string instead of a rope of
  // concatenated parts: ids live as long as their session, and a rope costs 2-3× the memory.
  id.charCodeAt(0);
  return id;
}

// `${prefix}_${PROCESS_TAG}` per prefix; prefixes are short literal tags, so a few dozen at most are kept.
const heads = new Map<string, string>();
const MAX_HEADS = 64;

function head(prefix: string): string {
  const value = `${prefix}_${PROCESS_TAG}`;
  value.charCodeAt(0);
  if (heads.size < MAX_HEADS) heads.set(prefix, value);
  return value;
}

/**
 * Creates an unguessable id (122 random bits) with an optional prefix, for
 * ids that act as a capability, such as a session id chosen by the server.
 */
export function createSecretId(prefix?: string): string {
  const id = randomUUID().replaceAll('-', '');
  return prefix ? `${prefix}_${id}` : id;
}
