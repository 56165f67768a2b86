import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { errorResponse } from './http-errors.js';

/** Wraps a POST handler with the body checks every JSON route shares (see {@link bodyLimited}). */
export type LimitedHandler = (
  handler: (c: Context) => Promise<Response>,
  options?: { json?: boolean },
) => (c: Context) => Response | Promise<Response>;

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * The body checks of the POST routes: a JSON content type (415 otherwise,
 * unless `json: false`), and at most `maxBodyBytes` (413), declared or, for
 * a chunked body, counted as it arrives. The limit wraps the handler itself
 * rather than being a route middleware of its own, and a body of declared
 * length goes straight to the handler: no async frame of its own.
 */
export function bodyLimited(maxBodyBytes: number): LimitedHandler {
  const tooLarge = (c: Context) =>
    errorResponse(c, 413, 'payload_too_large', `Request body exceeds ${maxBodyBytes} bytes`);
  const limitBody = bodyLimit({ maxSize: maxBodyBytes, onError: tooLarge });
  return (handler, { json = true } = {}) => {
    // No declared length (a chunked body): Hono's streaming limiter counts the bytes as they arrive.
    const chunked = async (c: Context) => {
      const refused = await limitBody(c, async () => {
        c.res = await handler(c);
      });
      return refused ?? c.res;
    };
    return (c) => {
      const type = c.req.header('content-type');
      if (json && type !== undefined && !JSON_TYPE.test(type)) {
        return errorResponse(
          c,
          415,
          'unsupported_media_type',
          `Send a JSON body (Content-Type: application/json), not ${type.split(';')[0]}`,
        );
      }
      const declared = c.req.header('content-length');
      if (declared === undefined) return chunked(c);
      if (Number(declared) > maxBodyBytes) return tooLarge(c);
      return handler(c);
    };
  };
}
