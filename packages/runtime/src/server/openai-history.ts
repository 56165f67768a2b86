import { conversationKey, type TranscriptEntry } from '../backend/conversation-index.js';
import type { ServerBackend } from '../backend/server-backend.js';

/** Who a conversation belongs to: the tenant and user of its requests. */
export interface ConversationOwner {
  tenantId?: string;
  userId?: string;
}

/**
 * The session of a client that resends the whole conversation and names no
 * session: the one whose turns ended with exactly `earlier` (the messages
 * before the turn's, user and assistant texts only), within the caller's
 * tenant and user. Undefined when `earlier` holds no answer (a first
 * message) or no session ended that way within the sessions' idle time.
 */
export async function sessionOfHistory(
  backend: ServerBackend,
  owner: ConversationOwner,
  earlier: readonly TranscriptEntry[],
): Promise<string | undefined> {
  if (!backend.conversations || !earlier.some((entry) => entry.role === 'assistant')) return undefined;
  return backend.conversations.find(conversationKey(owner.userId, earlier), owner.tenantId);
}

/**
 * Remembers that `conversation` (the client's earlier messages, the turn's
 * message and the answer as the client received it) is `sessionId`'s, so
 * that the client's next request finds it. A store failure is logged, not
 * answered: the answer stands, the next request opens a new session.
 */
export async function rememberHistory(
  backend: ServerBackend,
  owner: ConversationOwner,
  conversation: readonly TranscriptEntry[],
  sessionId: string,
): Promise<void> {
  if (!backend.conversations) return;
  try {
    await backend.conversations.remember(
      conversationKey(owner.userId, conversation),
      sessionId,
      owner.tenantId,
    );
  } catch (error) {
    backend.log(error);
  }
}
