import { ValidationError } from '@switchboard/core';
import type { z } from 'zod';

/** The longest cursor accepted: far above any this codebase writes, far below a request line's limit. */
const MAX_CURSOR_LENGTH = 512;

/**
 * @internal Encodes a page position as an opaque cursor: base64url of its
 * JSON. Clients pass it back unchanged; {@link decodePageCursor} validates it.
 */
export function encodePageCursor(position: unknown): string {
  return Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');
}

/**
 * @internal Decodes a cursor written by {@link encodePageCursor}, throwing a
 * `ValidationError` (HTTP 400) for anything else.
 */
export function decodePageCursor<T>(cursor: string, schema: z.ZodType<T>): T {
  const invalid = () =>
    new ValidationError({ message: 'Invalid cursor: pass back a cursor this API returned' });
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor))
    throw invalid();
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalid();
  return parsed.data;
}
