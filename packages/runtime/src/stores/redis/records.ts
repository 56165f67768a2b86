import { CorruptRecordError, type MessageItem, MessageItemSchema } from '@switchboard/core';
import { z } from 'zod';
import { deepFreeze } from '../freeze.js';
import type { TurnRecord } from '../session-store.js';

/** The schema version every record written by this code carries. */
export const RECORD_VERSION = 1;

const RouteStepSchema = z.object({
  hop: z.number().int().nonnegative(),
  kind: z.enum(['call', 'fan-out', 'answer', 'error']),
  calls: z.array(
    z.object({
      toolCallId: z.string(),
      agent: z.string(),
      thought: z.string().optional(),
      reason: z.string().optional(),
    }),
  ),
  error: z.string().optional(),
  decidedAt: z.string(),
  durationMs: z.number(),
});

const TurnRecordSchema = z.object({
  turnId: z.string().min(1),
  userMessageId: z.string(),
  status: z.enum(['completed', 'failed']),
  startedAt: z.string(),
  endedAt: z.string(),
  steps: z.array(RouteStepSchema),
  traceId: z.string().optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
}) satisfies z.ZodType<TurnRecord>;

/** A stored message: `{ v: 1, message }`. */
export const MessageRecordSchema = z.object({ v: z.literal(RECORD_VERSION), message: MessageItemSchema });
/** A stored turn summary: `{ v: 1, turn }`. */
export const TurnRecordEnvelopeSchema = z.object({ v: z.literal(RECORD_VERSION), turn: TurnRecordSchema });
/** A stored memory value: `{ v: 1, value }`. */
export const MemoryRecordSchema = z.object({ v: z.literal(RECORD_VERSION), value: z.unknown() });

/** Serialises a record body with the current schema version. */
export function encodeRecord(body: Record<string, unknown>): string {
  return JSON.stringify({ v: RECORD_VERSION, ...body });
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
  if (version !== RECORD_VERSION) {
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
  const parsed = parseRecord(raw, MessageRecordSchema);
  if ('detail' in parsed) throw new CorruptRecordError({ key: listItemKey(key, index, count), ...parsed });
  deepFreeze(parsed.data.message);
  return parsed.data.message;
}

/** Decodes (and freezes) the message records of a list read. */
export function decodeMessages(key: string, raws: readonly string[]): MessageItem[] {
  return raws.map((raw, index) => decodeMessage(key, raw, index, raws.length));
}
