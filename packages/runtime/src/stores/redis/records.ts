import { CorruptRecordError, MessageItemSchema } from '@switchboard/core';
import { z } from 'zod';
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
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (error) {
    throw new CorruptRecordError({ key, detail: 'not valid JSON', cause: error });
  }
  const version = typeof json === 'object' && json !== null ? (json as { v?: unknown }).v : undefined;
  if (version !== RECORD_VERSION) {
    const detail =
      version === undefined
        ? 'the record has no schema version'
        : `unsupported schema version ${JSON.stringify(version)}`;
    throw new CorruptRecordError({ key, detail });
  }
  const result = schema.safeParse(json);
  if (!result.success)
    throw new CorruptRecordError({ key, detail: describeIssues(result.error), cause: result.error });
  return result.data;
}

/** Decodes every record of a list read, naming the failing item's position in the error. */
export function decodeList<Schema extends z.ZodType>(
  key: string,
  raws: readonly string[],
  schema: Schema,
): Array<z.output<Schema>> {
  return raws.map((raw, index) =>
    decodeRecord(`${key} (item ${index + 1} of ${raws.length} read)`, raw, schema),
  );
}
