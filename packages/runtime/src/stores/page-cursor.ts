import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { ValidationError } from '@switchboard/core';
import type { z } from 'zod';

/** The longest cursor accepted: far above any this codebase writes, far below a request line's limit. */
const MAX_CURSOR_LENGTH = 512;

const invalidCursor = () =>
  new ValidationError({ message: 'Invalid cursor: pass back a cursor this API returned' });

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
  const invalid = invalidCursor;
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

/**
 * @internal Page positions sealed into cursors that only this instance
 * opens: AES-256-GCM under a key made when it is, bound to the tenant. A
 * cursor then says nothing a client could read (a position that counts
 * every tenant's writes would tell one tenant how busy the others are),
 * cannot be forged, and is refused by any other tenant. For a store whose
 * data lives in this process only, as the key does.
 */
export class SealedPageCursors {
  readonly #key = randomBytes(32);

  /** The cursor of `position` for `tenant`. */
  seal(position: unknown, tenant: string | undefined): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(tenantTag(tenant));
    const sealed = Buffer.concat([cipher.update(JSON.stringify(position), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
  }

  /** The position a cursor of {@link seal} holds, throwing a `ValidationError` (HTTP 400) for any other. */
  open<T>(cursor: string, schema: z.ZodType<T>, tenant: string | undefined): T {
    if (!CURSOR_TEXT.test(cursor) || cursor.length > MAX_CURSOR_LENGTH) throw invalidCursor();
    const bytes = Buffer.from(cursor, 'base64url');
    if (bytes.length <= IV_BYTES + TAG_BYTES) throw invalidCursor();
    let value: unknown;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, bytes.subarray(0, IV_BYTES));
      decipher.setAAD(tenantTag(tenant));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      const text = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
      value = JSON.parse(text.toString('utf8'));
    } catch {
      throw invalidCursor();
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw invalidCursor();
    return parsed.data;
  }
}

const IV_BYTES = 12;
const TAG_BYTES = 16;
const CURSOR_TEXT = /^[A-Za-z0-9_-]+$/;

/** The tenant as the cipher's additional data: no tenant and every tenant name differ. */
function tenantTag(tenant: string | undefined): Buffer {
  return Buffer.from(tenant === undefined ? '-' : `+${tenant}`, 'utf8');
}
