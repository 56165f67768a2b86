/**
 * @internal A whole session as one compact text, which the in-memory store
 * keeps of an idle session: its messages and turns in the compact form of
 * `compact-records.ts`, with times from the first message's, repeated
 * tasks and thoughts referred to, and the ids' process tag written once.
 *
 * @module
 */
import type { MessageItem } from '@switchboard/core';
import type { TurnRecord } from '../turns/turn-record.js';
import { unpackId, unpackText } from './compact-fields.js';
import { packMessage, packTurn, unpackMessage, unpackTurn } from './compact-records.js';
import { flatString } from './freeze.js';

/**
 * Throws a TypeError when `message` would not read back from its compact
 * form (a field a message must have is missing or not a text): a store
 * checks this before it compacts what it holds.
 */
function checkPackable(message: MessageItem): void {
  if (typeof message.id !== 'string' || message.id === '') throw new TypeError('id must be a text');
  if (typeof message.content !== 'string') throw new TypeError('content must be a text');
  if (typeof message.createdAt !== 'string') throw new TypeError('createdAt must be a text');
  if (message.role === 'tool') {
    if (typeof message.name !== 'string' || message.name === '') throw new TypeError('name must be a text');
    if (message.status !== 'ok' && message.status !== 'error')
      throw new TypeError('status must be ok or error');
  }
  if (message.role === 'tool' || message.role === 'assistant') {
    if (typeof message.toolCallId !== 'string' || message.toolCallId === '')
      throw new TypeError('toolCallId must be a text');
  } else if (message.role !== 'user') throw new TypeError('role must be user, tool or assistant');
  const { metadata } = message;
  if (metadata != null && (typeof metadata !== 'object' || Array.isArray(metadata)))
    throw new TypeError('metadata must be an object');
}

/** A session's messages and turns as one text (see {@link packSession}). */
export interface PackedSession {
  text: string;
  /** The process tag of the session's ids, written `_~` in `text`, when one was. */
  tag: string | undefined;
}

/** The process tag of ids made by `createId` (`turn_<12 base-36 digits><counter>`). */
const ID_TAG = /_([0-9a-z]{12})[0-9a-z]/;
/** The interned tags of packed sessions: one per process that wrote ids, so a handful. */
const idTags = new Map<string, string>();

/**
 * The thoughts and reasons of packed sessions, kept once for every session:
 * an orchestrator's are mostly the same few texts ("answered by billing"),
 * which a packed session refers to by number. Only ever added to (so a
 * number always means the same text), up to {@link MAX_SHARED_TEXTS} texts
 * of at most {@link MAX_SHARED_LENGTH} characters (1 MB at most); past
 * that, texts are written out in full.
 */
const sharedTexts: string[] = [];
const sharedTextNumbers = new Map<string, number>();
const MAX_SHARED_TEXTS = 4096;
const MAX_SHARED_LENGTH = 256;

/** The number of a shared text, or the text as packed when it cannot be shared. */
function shareText(packed: unknown, what: string): unknown {
  // A built-in router's phrase is packed as [phrase, part]: one number is shorter still.
  const text = Array.isArray(packed) ? unpackText(packed, what) : packed;
  if (typeof text !== 'string' || text.length > MAX_SHARED_LENGTH) return packed;
  let number = sharedTextNumbers.get(text);
  if (number === undefined) {
    if (sharedTexts.length >= MAX_SHARED_TEXTS) return packed;
    number = sharedTexts.push(text) - 1;
    sharedTextNumbers.set(text, number);
  }
  return number;
}

/**
 * A whole session as one text, for a store to keep while the session is
 * idle: `[base, messages, turns]` in compact JSON, where the times of
 * messages and turns are ms after `base` (the first message's time), a call
 * whose task is its turn's user message says `1` instead of repeating it, a
 * thought or reason is the number of a shared text where it can be, and the
 * process tag that the session's ids share is written once, beside the text.
 * @throws TypeError when a message would not read back, or JSON cannot hold a value (a BigInt, a cycle).
 */
export function packSession(messages: readonly MessageItem[], turns: readonly TurnRecord[]): PackedSession {
  const packedMessages = messages.map((message) => {
    checkPackable(message);
    return packMessage(message);
  });
  const first = packedMessages[0]?.[4];
  const base = typeof first === 'number' ? first : 0;
  const userTexts = new Map<string, string>();
  for (const packed of packedMessages) {
    if (typeof packed[4] === 'number') packed[4] -= base;
    if (packed[1] === 'u') userTexts.set(packed[2] as string, packed[3] as string);
  }
  const packedTurns = turns.map((turn) => {
    const packed = packTurn(turn);
    if (typeof packed[4] === 'number') packed[4] -= base;
    const userText = userTexts.get(turn.userMessageId);
    for (const step of packed[7] as unknown[][]) {
      for (const call of step[4] as unknown[][]) {
        if (userText !== undefined && call[2] === userText) call[2] = 1;
        if (call.length > 3) call[3] = shareText(call[3], 'thought');
        if (call.length > 4) call[4] = shareText(call[4], 'reason');
      }
    }
    return packed;
  });
  let text = JSON.stringify([base, packedMessages, packedTurns]);
  const found = ID_TAG.exec(turns[0]?.turnId ?? messages[0]?.id ?? '')?.[1];
  let tag: string | undefined;
  // Only when nothing else reads `_~`: then every `_~` of the text stands for the tag.
  if (found !== undefined && !text.includes('_~')) {
    tag = idTags.get(found);
    if (tag === undefined) {
      tag = flatString(`${found}`);
      if (idTags.size < 64) idTags.set(tag, tag);
    }
    text = text.replaceAll(`_${tag}`, '_~');
  }
  return { text: flatString(text), tag };
}

/** The messages (not frozen) and turns of a {@link packSession | packed session}. */
export function unpackSession({ text, tag }: PackedSession): {
  messages: MessageItem[];
  turns: TurnRecord[];
} {
  const json = tag === undefined ? text : text.replaceAll('_~', `_${tag}`);
  const [base, packedMessages, packedTurns] = JSON.parse(json) as [number, unknown[][], unknown[][]];
  const userTexts = new Map<string, string>();
  const messages = packedMessages.map((packed) => {
    if (typeof packed[4] === 'number') packed[4] += base;
    const message = unpackMessage(packed);
    if (message.role === 'user') userTexts.set(message.id, message.content);
    return message;
  });
  const turns = packedTurns.map((packed) => {
    if (typeof packed[4] === 'number') packed[4] += base;
    const userText = userTexts.get(unpackId(packed[2], packed[1] as string, 'userMessageId'));
    for (const step of packed[7] as unknown[][]) {
      for (const call of step[4] as unknown[][]) {
        if (call[2] === 1) call[2] = userText;
        if (typeof call[3] === 'number') call[3] = sharedTexts[call[3]];
        if (typeof call[4] === 'number') call[4] = sharedTexts[call[4]];
      }
    }
    return unpackTurn(packed);
  });
  return { messages, turns };
}
