import { randomBytes, randomUUID } from 'node:crypto';

// A random tag per process plus a counter: unique across replicas, and cheap enough for the turn path.
const PROCESS_TAG = randomBytes(8).toString('hex');
let counter = 0;

/**
 * Creates a unique id with an optional readable prefix, e.g. `call_9f2c…_1a`.
 * Ids are unique across processes but predictable within one: use
 * {@link createSecretId} for ids that grant access, such as session ids.
 * @param prefix - a short tag such as `msg`, `call` or `turn`.
 */
export function createId(prefix?: string): string {
  const id = `${PROCESS_TAG}${(counter++).toString(36)}`;
  return prefix ? `${prefix}_${id}` : id;
}

/**
 * Creates an unguessable id (122 random bits) with an optional prefix, for
 * ids that act as a capability, such as a session id chosen by the server.
 */
export function createSecretId(prefix?: string): string {
  const id = randomUUID().replaceAll('-', '');
  return prefix ? `${prefix}_${id}` : id;
}
