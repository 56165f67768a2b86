import { type MessageItem, ROUTE_TO_USER } from '@switchboard/core';
import type { RouteStep, StepCall, TurnRecord } from '../turns/turn-record.js';
import { packId, packText, restOf, text, trimmed, unpackId, unpackText } from './compact-fields.js';
import { packTime, unpackTime } from './compact-times.js';

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
