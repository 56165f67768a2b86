/**
 * One session of `InMemorySessionStore`, and how it is compacted and
 * unpacked: kept apart from the store so that the store reads as its
 * methods.
 *
 * @module
 */
import type { MessageItem } from '@switchboard/core';
import { isFinished, type TurnRecord } from '../turns/turn-record.js';
import { type PackedSession, packSession, unpackSession } from './compact-session.js';
import { freezeMessage } from './freeze.js';
import type { SessionState } from './tenant-shares.js';

/** Read in place of the arrays of a compacted session: empty and never written to. */
export const NO_MESSAGES: MessageItem[] = Object.freeze([]) as unknown as MessageItem[];
export const NO_TURNS: TurnRecord[] = Object.freeze([]) as unknown as TurnRecord[];
/** `compactedMessages` of a session that failed to compact: not tried again until its next write. */
export const NOT_COMPACTABLE = -1;

/** What the store keeps of one session. */
export interface SessionData {
  /** The messages ({@link NO_MESSAGES} while compacted). */
  messages: MessageItem[];
  /** The turn records ({@link NO_TURNS} while compacted). */
  turns: TurnRecord[];
  /** While compacted: the messages and turns in compact JSON (see `packSession`). */
  compacted: string | undefined;
  /** While compacted: the id tag written `~` in the text, when one was. */
  compactedTag: string | undefined;
  /** While compacted: how many messages the text holds; {@link NOT_COMPACTABLE} when it failed to compact. */
  compactedMessages: number;
  /** Idempotency keys seen: key → the turn and the request fingerprint. */
  requestKeys: Map<string, { turnId: string; fingerprint: string }> | undefined;
  expiresAt: number;
  /** The tenant it was opened for (`OpenTurnOptions.tenant`; null for none), unset until a turn opens it (unlisted until then). */
  tenant: string | null | undefined;
  /** When it was last written (epoch ms). */
  lastActiveAt: number;
  /** The number of the last write to any session: the order of {@link InMemorySessionStore}'s map, and its list cursors. */
  writeNumber: number;
  /** Its state as its tenant's share has it (see `TenantShares`); undefined while the share does not have it. */
  placed: SessionState | undefined;
}

/** Whether a session's last turn has ended, runs, or waits for approvals (a compacted session's have all ended). */
export function stateOf(session: SessionData): SessionState {
  const last = session.turns[session.turns.length - 1];
  if (!last || isFinished(last.status)) return 'ended';
  return last.status === 'awaiting_approval' ? 'awaiting' : 'running';
}

/** How many messages a session holds, compacted or not. */
export function messageCount(session: SessionData): number {
  return session.compacted === undefined ? session.messages.length : session.compactedMessages;
}

/** Replaces a session's messages and turns by one packed text (see `packSession`). */
export function compact(session: SessionData): boolean {
  const { messages, turns } = session;
  if (messages.length === 0 && turns.length === 0) return false;
  let packed: PackedSession;
  try {
    packed = packSession(messages, turns);
  } catch {
    // A value JSON cannot hold (a BigInt, a cycle in metadata or an agent's state), or a message that
    // would not read back: the session stays as it is, and is not tried again until its next write.
    session.compactedMessages = NOT_COMPACTABLE;
    return false;
  }
  session.compacted = packed.text;
  session.compactedTag = packed.tag;
  session.compactedMessages = messages.length;
  session.messages = NO_MESSAGES;
  session.turns = NO_TURNS;
  return true;
}

/** Unpacks a compacted session back into its messages (frozen) and turns. */
export function expand(session: SessionData): void {
  const { messages, turns } = unpackSession({
    text: session.compacted as string,
    tag: session.compactedTag,
  });
  for (const message of messages) freezeMessage(message);
  session.messages = messages;
  session.turns = turns;
  session.compacted = undefined;
  session.compactedTag = undefined;
  session.compactedMessages = 0;
}
