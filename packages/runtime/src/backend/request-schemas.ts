/**
 * The ids in requests, checked the same way by every protocol the app
 * speaks (its HTTP API, A2A, MCP).
 *
 * @module
 */
import { z } from 'zod';

const SESSION_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
/** `.` and `..`: no URL can address them. */
const isDotSegment = (id: string) => id === '.' || id === '..';

/** Session ids: 1–128 letters, digits, `_`, `-`, `.` or `:`. */
export const SessionIdSchema = z
  .string()
  .regex(SESSION_ID, 'sessionId must be 1-128 characters: letters, digits, _ - . :')
  .refine((id) => !isDotSegment(id), 'sessionId must not be . or .. (no URL can address it)');

/** Whether {@link SessionIdSchema} accepts `value`, without building its result (for a route's fast path). */
export function isSessionId(value: unknown): value is string {
  return typeof value === 'string' && SESSION_ID.test(value) && !isDotSegment(value);
}

/** Turn and approval ids in a path: 1–128 letters, digits, `_`, `-`, `.` or `:`. */
export const TurnIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'ids are 1-128 characters: letters, digits, _ - . :');

/** A user id in a path: 1–256 characters, no control characters. */
export const UserIdSchema = z
  .string()
  .min(1)
  .max(256)
  .refine(
    (id) => ![...id].some((character) => character.charCodeAt(0) < 0x20 || character.charCodeAt(0) === 0x7f),
    'userId must not contain control characters',
  );

/** An `Idempotency-Key` header: 1–255 visible ASCII characters. */
export const IdempotencyKeySchema = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, 'Idempotency-Key must be 1-255 visible ASCII characters');
