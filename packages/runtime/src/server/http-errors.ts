import { SwitchboardError, ValidationError } from '@switchboard/core';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';

const STATUS_BY_CODE: Record<string, ContentfulStatusCode> = {
  validation_error: 400,
  not_found: 404,
  session_busy: 409,
  payload_too_large: 413,
  store_unavailable: 503,
  shutting_down: 503,
};

/** Writes the JSON error body every route uses. */
export function errorResponse(
  c: Context,
  status: ContentfulStatusCode,
  code: string,
  message: string,
  issues?: readonly string[],
) {
  return c.json(
    { error: issues?.length ? { code, message, issues: [...issues] } : { code, message } },
    status,
  );
}

/**
 * The one place where errors become HTTP statuses: user errors are 4xx with
 * their message; unexpected errors are a 500 without internals or stacks.
 */
export function handleError(error: unknown, c: Context, log: (error: unknown) => void) {
  if (SwitchboardError.isInstance(error)) {
    const known = error as SwitchboardError;
    const status = STATUS_BY_CODE[known.code] ?? (known.kind === 'user' ? 400 : 500);
    if (status >= 500 && status !== 503) log(error);
    const issues = ValidationError.isInstance(error) ? (error as ValidationError).issues : undefined;
    const message = status === 500 ? 'Internal server error' : known.message;
    return errorResponse(c, status, known.code, message, issues);
  }
  if (error instanceof HTTPException) {
    const status = error.status as ContentfulStatusCode;
    return errorResponse(
      c,
      status,
      status === 413 ? 'payload_too_large' : 'http_error',
      error.message || 'Request failed',
    );
  }
  log(error);
  return errorResponse(c, 500, 'internal_error', 'Internal server error');
}

/** Parses `value` with `schema`, throwing a `ValidationError` that lists every problem. */
export function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((issue) =>
    issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message,
  );
  throw new ValidationError({ message: `Invalid ${what}`, issues });
}

/** Parses a JSON body, turning bad JSON into a `ValidationError` instead of a 500. */
export function parseJsonBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ValidationError({ message: 'Malformed JSON body' });
  }
}
