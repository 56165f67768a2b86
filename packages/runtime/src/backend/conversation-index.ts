/**
 * Where a client that resends the whole conversation on every request (the
 * OpenAI clients, the AI SDK, LangChain) finds its session again without
 * naming one: after each turn the conversation as the client will send it
 * back (its user and assistant texts, the answer last) is hashed and mapped
 * to the turn's session; a request whose earlier messages hash the same
 * continues that session.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type { MemoryStore } from '../stores/memory-store.js';

/** One message of a conversation as a client resends it: only user and assistant texts count. */
export interface TranscriptEntry {
  role: 'user' | 'assistant';
  text: string;
}

/**
 * The key of a conversation within a tenant: a SHA-256 over its user (so
 * that two users never share one, whatever they said) and its entries. The
 * texts are length-prefixed, so no two conversations share a key.
 */
export function conversationKey(userId: string | undefined, transcript: readonly TranscriptEntry[]): string {
  const hash = createHash('sha256').update(`switchboard:conversation:${userId ?? ''}\n`);
  for (const { role, text } of transcript) hash.update(`${role}:${text.length}:${text}\n`);
  return hash.digest('hex');
}

/** Maps conversation keys to sessions, per tenant (see {@link conversationIndex}). */
export interface ConversationIndex {
  /** The session whose conversation hashed to `key`, if it is still remembered. */
  find(key: string, tenantId?: string): Promise<string | undefined>;
  /** Remembers that the conversation hashing to `key` is `sessionId`'s. */
  remember(key: string, sessionId: string, tenantId?: string): Promise<void>;
}

/**
 * A {@link ConversationIndex} over the app's memory store: one entry per
 * turn of a session started without a session id, in the tenant's
 * `conversations` namespace, kept as long as an idle session
 * (`ttlSeconds`). An entry holds a session id only, never message text.
 */
export function conversationIndex(memory: MemoryStore, ttlSeconds: number): ConversationIndex {
  const namespace = (tenantId?: string) => (tenantId ? `tenant:${tenantId}:conversations` : 'conversations');
  return {
    async find(key, tenantId) {
      const value = await memory.get(namespace(tenantId), key);
      return typeof value === 'string' ? value : undefined;
    },
    remember: (key, sessionId, tenantId) => memory.set(namespace(tenantId), key, sessionId, { ttlSeconds }),
  };
}
