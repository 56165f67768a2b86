import { type MessageItem, ROUTE_TO_USER } from '@switchboard/core';
import type { RouteStep, StepCall, TurnRecord } from '../turns/turn-record.js';
import { flatString } from './freeze.js';

/**
 * @internal The compact form of stored messages and finished turns: JSON
 * arrays whose positions stand for the fields every record has, with the
 * rarer fields in a trailing object, and times as epoch milliseconds (a
 * turn's times as offsets from its start). It is what the Redis store writes
 * (a third of the bytes of `{ v: 1, message: { … } }`) and what the
 * in-memory store keeps of an idle session (one string instead of some eighty
 * objects for the garbage collector to walk).
 *
 * ```
 * message  [3, role, id, content, at, …]   user: [metadata]
 *                                          tool: [toolCallId, name, status (null: ok), metadata]
 *                                          assistant: [toolCallId, metadata]
 * (an id sharing the record's first id's tag is `[prefix, shared digits, rest]`, see packId;
 * a thought or reason that is a built-in router's phrase is `[phrase number, part]`)
 * turn     [3, turnId, userMessageId, status, startedAt, endedAt, updatedAt (true: as endedAt), steps, rest]
 * step     [hop, kind, decidedAt, durationMs, calls, rest]
 * call     [toolCallId, agent (null: route_to_user), message, thought, reason, rest]
 * ```
 *
 * An absent field is `null` (trailing ones are left out). A time that does
 * not read back as the same ISO 8601 text is kept as its text. Packing then
 * unpacking gives a record deep-equal to the original (its keys may come in
 * another order).
 */
export const COMPACT_VERSION = 3;

/** A message in compact form. */
export type PackedMessage = unknown[];
/** A turn record in compact form. */
export type PackedTurn = unknown[];

const ROLE_CODES = { user: 'u', tool: 't', assistant: 'a' } as const;

/** `iso` as epoch ms minus `base`, when it reads back exactly; otherwise the text itself. */
function packTime(iso: string, base = 0): number | string {
  const ms = exactIsoMs(iso);
  return ms === undefined ? iso : ms - base;
}

const ZERO = 48;

/** The digits of `text` from `start` to `end` as a number, or -1 when one is not a digit. */
function digits(text: string, start: number, end: number): number {
  let value = 0;
  for (let index = start; index < end; index++) {
    const digit = text.charCodeAt(index) - ZERO;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/**
 * The epoch ms of `iso` when it is exactly what `Date.prototype.toISOString`
 * writes (`YYYY-MM-DDTHH:mm:ss.sssZ`, a real date of a four-digit year), so
 * that the number reads back as the same text; undefined otherwise. Read by
 * hand: `Date.parse` plus `toISOString` to check cost ten times as much, on
 * every message and step stored.
 */
function exactIsoMs(iso: string): number | undefined {
  if (
    iso.length !== 24 ||
    iso.charCodeAt(4) !== 45 || // -
    iso.charCodeAt(7) !== 45 ||
    iso.charCodeAt(10) !== 84 || // T
    iso.charCodeAt(13) !== 58 || // :
    iso.charCodeAt(16) !== 58 ||
    iso.charCodeAt(19) !== 46 || // .
    iso.charCodeAt(23) !== 90 // Z
  )
    return undefined;
  const year = digits(iso, 0, 4);
  const month = digits(iso, 5, 7);
  const day = digits(iso, 8, 10);
  const hour = digits(iso, 11, 13);
  const minute = digits(iso, 14, 16);
  const second = digits(iso, 17, 19);
  const ms = digits(iso, 20, 23);
  if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23) return undefined;
  if (minute < 0 || minute > 59 || second < 0 || second > 59 || ms < 0) return undefined;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days =
    month === 2 ? (leap ? 29 : 28) : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
  if (day > days) return undefined;
  // Date.UTC reads years 0–99 as 1900–1999: set the full year instead.
  const time = Date.UTC(2000, month - 1, day, hour, minute, second, ms);
  return year >= 100
    ? Date.UTC(year, month - 1, day, hour, minute, second, ms)
    : new Date(time).setUTCFullYear(year);
}

/** The ISO 8601 text of a packed time. */
function unpackTime(value: unknown, base = 0): string {
  if (typeof value === 'number') return isoOfMs(base + value);
  if (typeof value === 'string') return value;
  throw new TypeError('a time must be a number or a string');
}

const DAY_MS = 86_400_000;
/** The first and last ms whose ISO text has a four-digit year (what {@link exactIsoMs} packs). */
const FIRST_MS = -62_167_219_200_000;
const LAST_MS = 253_402_300_799_999;
let lastDay = Number.NaN;
let lastDayText = '';

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

/**
 * `new Date(ms).toISOString()`, written by hand: the date part is formatted
 * once per day and reused (the times of a session mostly share one), the
 * time of day is arithmetic. Several times cheaper, and every message and
 * step of a window or a compacted session is read through it.
 */
function isoOfMs(ms: number): string {
  if (!Number.isInteger(ms) || ms < FIRST_MS || ms > LAST_MS) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY_MS);
  if (day !== lastDay) {
    lastDay = day;
    lastDayText = new Date(day * DAY_MS).toISOString().slice(0, 11);
  }
  let rest = ms - day * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  const text = `${lastDayText}${pad(hours, 2)}:${pad(minutes, 2)}:${pad(seconds, 2)}.${pad(rest - seconds * 1000, 3)}Z`;
  // Kept with the message: one flat string, not a rope of the parts.
  text.charCodeAt(0);
  return text;
}

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

/** Drops trailing nulls, so that absent optional fields cost nothing. */
function trimmed(values: unknown[]): unknown[] {
  let end = values.length;
  while (end > 0 && (values[end - 1] === null || values[end - 1] === undefined)) end -= 1;
  values.length = end;
  return values;
}

/** `rest` when it has a key, otherwise null. */
function restOf(rest: Record<string, unknown>): Record<string, unknown> | null {
  for (const key in rest) if (rest[key] !== undefined) return rest;
  return null;
}

/** The compact form of a message. */
export function packMessage(message: MessageItem): PackedMessage {
  const at = packTime(message.createdAt);
  const metadata = message.metadata ?? null;
  switch (message.role) {
    case 'user':
      return trimmed([COMPACT_VERSION, 'u', message.id, message.content, at, metadata]);
    case 'tool':
      return trimmed([
        COMPACT_VERSION,
        't',
        message.id,
        message.content,
        at,
        packId(message.toolCallId, message.id),
        message.name,
        // Most replies are `ok`: null (or nothing) says so.
        message.status === 'ok' ? null : message.status,
        metadata,
      ]);
    case 'assistant':
      return trimmed([
        COMPACT_VERSION,
        'a',
        message.id,
        message.content,
        at,
        packId(message.toolCallId, message.id),
        metadata,
      ]);
  }
}

function text(value: unknown, what: string, { empty = true } = {}): string {
  if (typeof value !== 'string' || (!empty && value === '')) throw new TypeError(`${what} must be a text`);
  return value;
}

function metadataOf(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw new TypeError('metadata must be an object');
  return value as Record<string, unknown>;
}

/**
 * The message a compact form stands for, checked field by field.
 * @throws TypeError naming the first field that is not what a message has.
 */
export function unpackMessage(packed: unknown): MessageItem {
  if (!Array.isArray(packed) || packed[0] !== COMPACT_VERSION) throw new TypeError('not a compact message');
  const [, role, rawId, rawContent, at] = packed;
  const id = text(rawId, 'id', { empty: false });
  const content = text(rawContent, 'content');
  const createdAt = unpackTime(at);
  let message: MessageItem;
  let metadata: Record<string, unknown> | undefined;
  if (role === ROLE_CODES.user) {
    message = { id, role: 'user', content, createdAt };
    metadata = metadataOf(packed[5]);
  } else if (role === ROLE_CODES.tool) {
    const status = packed[7] ?? 'ok';
    if (status !== 'ok' && status !== 'error') throw new TypeError('status must be ok or error');
    message = {
      id,
      role: 'tool',
      name: text(packed[6], 'name', { empty: false }),
      toolCallId: unpackId(packed[5], id, 'toolCallId'),
      content,
      status,
      createdAt,
    };
    metadata = metadataOf(packed[8]);
  } else if (role === ROLE_CODES.assistant) {
    message = {
      id,
      role: 'assistant',
      content,
      toolCallId: unpackId(packed[5], id, 'toolCallId'),
      createdAt,
    };
    metadata = metadataOf(packed[6]);
  } else {
    throw new TypeError('role must be u, t or a');
  }
  if (metadata !== undefined) message.metadata = metadata;
  return message;
}

/**
 * An id that shares its digits after the `_` with `ref` (ids made in one
 * process share a tag: `call_<tag>4` beside `turn_<tag>3`) as `[prefix,
 * shared digits, rest]`; any other id as it is.
 */
function packId(id: string, ref: string): string | [string, number, string] {
  const cut = id.indexOf('_');
  const refCut = ref.indexOf('_');
  if (cut <= 0 || refCut <= 0) return id;
  const most = Math.min(id.length - cut - 1, ref.length - refCut - 1);
  let shared = 0;
  while (shared < most && id.charCodeAt(cut + 1 + shared) === ref.charCodeAt(refCut + 1 + shared))
    shared += 1;
  return shared >= 8 ? [id.slice(0, cut), shared, id.slice(cut + 1 + shared)] : id;
}

/** The id that {@link packId} packed against `ref`. */
function unpackId(value: unknown, ref: string, what: string): string {
  if (typeof value === 'string' && value !== '') return value;
  if (Array.isArray(value) && typeof value[0] === 'string' && typeof value[1] === 'number') {
    const refCut = ref.indexOf('_');
    return `${value[0]}_${ref.slice(refCut + 1, refCut + 1 + value[1])}${text(value[2], what)}`;
  }
  throw new TypeError(`${what} must be a text`);
}

/**
 * The phrases of the built-in orchestrators' thoughts and reasons, by number
 * (append only: a stored number always means the same phrase). A text that
 * is one of them around a variable part is stored as `[number, part]`.
 */
const PHRASES: ReadonlyArray<readonly [string, string]> = [
  ['Returning the reply of ', ' to the user'],
  ['answered by ', ''],
  ['matched keywords: ', ''],
  ['Keyword scores: ', ''],
];

function packText(value: string | undefined): unknown {
  if (value === undefined) return null;
  for (let index = 0; index < PHRASES.length; index++) {
    const [head, tail] = PHRASES[index] as readonly [string, string];
    if (value.length >= head.length + tail.length && value.startsWith(head) && value.endsWith(tail))
      return [index + 1, value.slice(head.length, value.length - tail.length)];
  }
  return value;
}

/** The text {@link packText} packed (a phrase filled in, or the text as it is). */
function unpackText(value: unknown, what: string): string {
  if (Array.isArray(value)) {
    const phrase = PHRASES[(value[0] as number) - 1];
    if (!phrase) throw new TypeError(`${what} names an unknown phrase`);
    return `${phrase[0]}${text(value[1], what)}${phrase[1]}`;
  }
  return text(value, what);
}

function packCall(call: StepCall, ref: string): unknown[] {
  const { toolCallId, agent, message, thought, reason, ...rest } = call;
  // Every answer calls `route_to_user`: null says so.
  const named = agent === ROUTE_TO_USER ? null : agent;
  return trimmed([
    packId(toolCallId, ref),
    named,
    message ?? null,
    packText(thought),
    packText(reason),
    restOf(rest),
  ]);
}

function unpackCall(packed: unknown, ref: string): StepCall {
  if (!Array.isArray(packed)) throw new TypeError('a call must be an array');
  const [toolCallId, agent, message, thought, reason, rest] = packed;
  const call: StepCall = {
    toolCallId: unpackId(toolCallId, ref, 'toolCallId'),
    agent: agent == null ? ROUTE_TO_USER : text(agent, 'agent'),
  };
  if (message != null) call.message = text(message, 'message');
  if (thought != null) call.thought = unpackText(thought, 'thought');
  if (reason != null) call.reason = unpackText(reason, 'reason');
  return rest == null ? call : Object.assign(call, rest);
}

function packStep(step: RouteStep, base: number, ref: string): unknown[] {
  const { hop, kind, decidedAt, durationMs, calls, ...rest } = step;
  return trimmed([
    hop,
    kind,
    packTime(decidedAt, base),
    durationMs,
    calls.map((call) => packCall(call, ref)),
    restOf(rest),
  ]);
}

function unpackStep(packed: unknown, base: number, ref: string): RouteStep {
  if (!Array.isArray(packed) || !Array.isArray(packed[4])) throw new TypeError('a step must be an array');
  const [hop, kind, decidedAt, durationMs, calls, rest] = packed;
  const step = {
    hop,
    kind,
    calls: (calls as unknown[]).map((call) => unpackCall(call, ref)),
    decidedAt: unpackTime(decidedAt, base),
    durationMs,
  } as RouteStep;
  return rest == null ? step : Object.assign(step, rest);
}

/** The compact form of a turn record (any status; the stores pack finished turns). */
export function packTurn(turn: TurnRecord): PackedTurn {
  const { turnId, userMessageId, status, startedAt, endedAt, updatedAt, steps, ...rest } = turn;
  const start = packTime(startedAt);
  // Offsets only from a start that is a number; otherwise every time stays text.
  const base = typeof start === 'number' ? start : Number.NaN;
  const relative = (iso: string) => (Number.isNaN(base) ? iso : packTime(iso, base));
  return trimmed([
    COMPACT_VERSION,
    turnId,
    packId(userMessageId, turnId),
    status,
    start,
    endedAt === undefined ? null : relative(endedAt),
    // Most turns were last written when they ended: true says "as endedAt", null "absent".
    updatedAt === undefined
      ? null
      : endedAt !== undefined && updatedAt === endedAt
        ? true
        : relative(updatedAt),
    steps.map((step) => packStep(step, Number.isNaN(base) ? 0 : base, turnId)),
    restOf(rest),
  ]);
}

/**
 * The turn record a compact form stands for. Checks the frame only: the
 * Redis store validates what it reads against the turn schema afterwards.
 * @throws TypeError when the frame is not a compact turn.
 */
export function unpackTurn(packed: unknown): TurnRecord {
  if (!Array.isArray(packed) || packed[0] !== COMPACT_VERSION) throw new TypeError('not a compact turn');
  const [, turnId, userMessageId, status, start, endedAt, updatedAt, steps, rest] = packed;
  if (!Array.isArray(steps)) throw new TypeError('steps must be an array');
  const base = typeof start === 'number' ? start : 0;
  const ref = text(turnId, 'turnId', { empty: false });
  const turn = {
    turnId,
    userMessageId: unpackId(userMessageId, ref, 'userMessageId'),
    status,
    startedAt: unpackTime(start),
    steps: steps.map((step) => unpackStep(step, base, ref)),
  } as TurnRecord;
  if (endedAt != null) turn.endedAt = unpackTime(endedAt, base);
  if (updatedAt === true && turn.endedAt !== undefined) turn.updatedAt = turn.endedAt;
  else if (updatedAt != null) turn.updatedAt = unpackTime(updatedAt, base);
  return rest == null ? turn : Object.assign(turn, rest);
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
