import { CorruptRecordError, type MessageItem, MessageItemSchema } from '@switchboard/core';
import { z } from 'zod';
import type { TurnRecord } from '../../turns/turn-record.js';
import { TurnRecordSchema } from '../../turns/turn-schemas.js';
import { COMPACT_VERSION, packMessage, packTurn, unpackMessage, unpackTurn } from '../compact-records.js';
import { deepFreeze } from '../freeze.js';

/** The schema version of message and memory records, and of turn records an older replica can read. */
export const RECORD_VERSION = 1;
/**
 * The schema version of turn records that only this version can read: a turn
 * that is running, paused or interrupted, or whose steps use a newer kind.
 */
export const TURN_RECORD_VERSION = 2;

/** A stored message: `{ v: 1, message }`. */
export const MessageRecordSchema = z.object({ v: z.literal(RECORD_VERSION), message: MessageItemSchema });
/** A stored turn: `{ v: 1, turn }` (readable by older replicas) or `{ v: 2, s: status, turn }`. */
export const TurnRecordEnvelopeSchema = z.object({
  v: z.union([z.literal(RECORD_VERSION), z.literal(TURN_RECORD_VERSION)]),
  s: z.string().optional(),
  turn: TurnRecordSchema,
});
/** A stored memory value: `{ v: 1, value }`. */
export const MemoryRecordSchema = z.object({ v: z.literal(RECORD_VERSION), value: z.unknown() });

const OLD_STEP_KINDS = new Set(['call', 'fan-out', 'answer', 'error']);

/**
 * Serialises a turn record. A finished turn that the previous version's
 * schema accepts (status `completed` or `failed`, the old step kinds) is
 * written as `v: 1`, so that replicas of the previous version still list it
 * during a rolling upgrade (they ignore the fields they do not know). Any
 * other turn is `v: 2`, with its status first (`s`), where the open-turn
 * script reads it without decoding the record.
 */
export function encodeTurnRecord(turn: TurnRecord, compact = false): string {
  // The open-turn script reads an unfinished turn's status from its `v: 2` frame: only ended turns are compact.
  if (compact && isEnded(turn)) return JSON.stringify(packTurn(turn));
  const readableByV1 =
    (turn.status === 'completed' || turn.status === 'failed') &&
    turn.endedAt !== undefined &&
    turn.steps.every((step) => OLD_STEP_KINDS.has(step.kind));
  return readableByV1
    ? JSON.stringify({ v: RECORD_VERSION, turn })
    : JSON.stringify({ v: TURN_RECORD_VERSION, s: turn.status, turn });
}

function isEnded(turn: TurnRecord): boolean {
  return turn.status !== 'running' && turn.status !== 'awaiting_approval';
}

/** Serialises a record body with the current schema version. */
export function encodeRecord(body: Record<string, unknown>): string {
  return JSON.stringify({ v: RECORD_VERSION, ...body });
}

/**
 * Serialises a message: compact (`[3, role, …]`, see compact-records.ts),
 * or `{ v: 1, message }` as the previous version wrote it.
 */
export function encodeMessageRecord(message: MessageItem, compact: boolean): string {
  return compact ? JSON.stringify(packMessage(message)) : encodeRecord({ message });
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => (issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message))
    .join('; ');
}

type Parsed<Data> = { data: Data } | { detail: string; cause?: unknown };

/** Parses and validates one record, reporting a failure as a value so that callers name the key only then. */
function parseRecord<Schema extends z.ZodType>(raw: string, schema: Schema): Parsed<z.output<Schema>> {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (error) {
    return { detail: 'not valid JSON', cause: error };
  }
  const version = typeof json === 'object' && json !== null ? (json as { v?: unknown }).v : undefined;
  if (version !== RECORD_VERSION && version !== TURN_RECORD_VERSION) {
    const detail =
      version === undefined
        ? 'the record has no schema version'
        : `unsupported schema version ${JSON.stringify(version)}`;
    return { detail };
  }
  const result = schema.safeParse(json);
  if (!result.success) return { detail: describeIssues(result.error), cause: result.error };
  return { data: result.data };
}

/**
 * Parses and validates one stored record.
 * @param key - the Redis key (and position) named in the error.
 * @throws CorruptRecordError for bad JSON, an unknown schema version or a failed schema check.
 */
export function decodeRecord<Schema extends z.ZodType>(
  key: string,
  raw: string,
  schema: Schema,
): z.output<Schema> {
  const parsed = parseRecord(raw, schema);
  if ('detail' in parsed) throw new CorruptRecordError({ key, ...parsed });
  return parsed.data;
}

const OPEN_BRACKET = '['.charCodeAt(0);

/** Parses a compact record and unpacks it, reporting a failure as a value. */
function parseCompact<Data>(raw: string, unpack: (packed: unknown) => Data): Parsed<Data> {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (error) {
    return { detail: 'not valid JSON', cause: error };
  }
  if (!Array.isArray(json) || json[0] !== COMPACT_VERSION) {
    const version = Array.isArray(json) ? JSON.stringify(json[0]) : 'none';
    return { detail: `unsupported compact record version ${version}` };
  }
  try {
    return { data: unpack(json) };
  } catch (error) {
    return { detail: (error as Error).message, cause: error };
  }
}

/** Parses a stored turn in either form: compact, or a `{ v, turn }` envelope. */
function parseTurn(raw: string): Parsed<TurnRecord> {
  if (raw.charCodeAt(0) !== OPEN_BRACKET) {
    const parsed = parseRecord(raw, TurnRecordEnvelopeSchema);
    return 'detail' in parsed ? parsed : { data: parsed.data.turn };
  }
  const unpacked = parseCompact(raw, unpackTurn);
  if ('detail' in unpacked) return unpacked;
  // The compact frame keeps fields as written: the schema checks them as it checks an envelope's turn.
  const result = TurnRecordSchema.safeParse(unpacked.data);
  return result.success
    ? { data: result.data as TurnRecord }
    : { detail: describeIssues(result.error), cause: result.error };
}

/**
 * Decodes one stored turn record, compact or not.
 * @throws CorruptRecordError naming `key`.
 */
export function decodeTurn(key: string, raw: string): TurnRecord {
  const parsed = parseTurn(raw);
  if ('detail' in parsed) throw new CorruptRecordError({ key, ...parsed });
  return parsed.data;
}

/** Decodes the turn records of a list read, naming the failing item's position in the error. */
export function decodeTurns(key: string, raws: readonly string[]): TurnRecord[] {
  return raws.map((raw, index) => {
    const parsed = parseTurn(raw);
    if ('detail' in parsed)
      throw new CorruptRecordError({ key: listItemKey(key, index, raws.length), ...parsed });
    return parsed.data;
  });
}

/** The position of item `index` of a list read, for error messages. */
function listItemKey(key: string, index: number, count: number): string {
  return `${key} (item ${index + 1} of ${count} read)`;
}

/** Decodes every record of a list read, naming the failing item's position in the error. */
export function decodeList<Schema extends z.ZodType>(
  key: string,
  raws: readonly string[],
  schema: Schema,
): Array<z.output<Schema>> {
  return raws.map((raw, index) => {
    const parsed = parseRecord(raw, schema);
    if ('detail' in parsed)
      throw new CorruptRecordError({ key: listItemKey(key, index, raws.length), ...parsed });
    return parsed.data;
  });
}

/**
 * Decodes item `index` of `count` of a message list read. The message is
 * frozen (with its `metadata`), as the in-memory store freezes what it keeps,
 * so that a decoded message can be handed out more than once.
 * @throws CorruptRecordError naming the key and the item's position.
 */
export function decodeMessage(key: string, raw: string, index: number, count: number): MessageItem {
  if (raw.charCodeAt(0) === OPEN_BRACKET) {
    const unpacked = parseCompact(raw, unpackMessage);
    if ('detail' in unpacked)
      throw new CorruptRecordError({ key: listItemKey(key, index, count), ...unpacked });
    return deepFreeze(unpacked.data);
  }
  const parsed = parseRecord(raw, MessageRecordSchema);
  if ('detail' in parsed) throw new CorruptRecordError({ key: listItemKey(key, index, count), ...parsed });
  deepFreeze(parsed.data.message);
  return parsed.data.message;
}

/** Decodes (and freezes) the message records of a list read. */
export function decodeMessages(key: string, raws: readonly string[]): MessageItem[] {
  return raws.map((raw, index) => decodeMessage(key, raw, index, raws.length));
}
