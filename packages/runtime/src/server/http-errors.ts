import { SwitchboardError, ValidationError } from '@switchboard/core';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';
import { parseBoundedJson } from '../backend/json-bounds.js';
import { publicErrorOf } from '../backend/public-error.js';

/** Writes the JSON error body every route uses. */
export function errorResponse(
  c: Context,
  status: ContentfulStatusCode,
  code: string,
  message: string,
  issues?: readonly string[],
  extra?: Record<string, unknown>,
) {
  const error: Record<string, unknown> = { code, message };
  if (issues?.length) error.issues = [...issues];
  if (extra) Object.assign(error, extra);
  return c.json({ error }, status);
}

/**
 * The one place where errors become HTTP statuses: user errors are 4xx with
 * their message; unexpected errors are a 500 without internals or stacks.
 */
export function handleError(
  error: unknown,
  c: Context,
  log: (error: unknown, c?: Context) => void,
  exposeDetails = false,
) {
  if (SwitchboardError.isInstance(error)) {
    const { status, code, message, issues, extra } = publicErrorOf(
      error as SwitchboardError,
      (logged) => log(logged, c),
      exposeDetails,
      c.req.header('idempotency-key') !== undefined,
    );
    return errorResponse(c, status, code, message, issues, extra);
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
  log(error, c);
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

/**
 * Parses a JSON body, turning bad JSON, or JSON nested deeper than
 * `MAX_JSON_DEPTH`, into a `ValidationError` instead of a 500.
 */
export function parseJsonBody(text: string): unknown {
  const parsed = parseBoundedJson(text);
  if ('malformed' in parsed) throw new ValidationError({ message: 'Malformed JSON body' });
  if ('problem' in parsed) {
    const { path, message } = parsed.problem;
    throw new ValidationError({
      message: 'Invalid request body',
      issues: [path.length > 0 ? `${path.join('.')}: ${message}` : message],
    });
  }
  return parsed.value;
}
