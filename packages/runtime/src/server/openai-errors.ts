import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { handleError } from './http-errors.js';

/** OpenAI's error body: `{ error: { message, type, code, param } }`, plus Switchboard's own fields. */
export interface OpenAiErrorBody {
  error: {
    message: string;
    type: string;
    code: string | null;
    param: string | null;
    issues?: string[];
    [extra: string]: unknown;
  };
}

/** OpenAI's error `type` for a status, so that clients branching on it behave as with OpenAI. */
function errorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** The request field a validation issue names (`messages.0.content: …` → `messages.0.content`). */
function paramOf(issues: readonly string[] | undefined): string | null {
  const match = issues?.[0] && /^([\w.-]+): /.exec(issues[0]);
  return match ? match[1]! : null;
}

/**
 * Rewrites the JSON error body every Switchboard route answers
 * (`{ error: { code, message, issues? } }`) into OpenAI's shape (a
 * validation error's message already lists its issues, which OpenAI
 * clients show; `param` is the field of the first).
 */
export function toOpenAiErrorBody(status: number, body: unknown): OpenAiErrorBody {
  const error = (
    typeof body === 'object' && body !== null ? (body as { error?: unknown }).error : undefined
  ) as Record<string, unknown> | undefined;
  if (typeof error !== 'object' || error === null) {
    return { error: { message: 'Request failed', type: errorType(status), code: null, param: null } };
  }
  if (typeof error.type === 'string') return { error: error as OpenAiErrorBody['error'] };
  const { code, message, issues, ...extra } = error;
  const list = Array.isArray(issues)
    ? issues.filter((issue): issue is string => typeof issue === 'string')
    : [];
  const text = typeof message === 'string' && message ? message : 'Request failed';
  const shaped: OpenAiErrorBody['error'] = {
    message: text,
    type: errorType(status),
    code: typeof code === 'string' ? code : null,
    param: paramOf(list),
    ...extra,
  };
  if (list.length > 0) shaped.issues = list;
  return { error: shaped };
}

/** Answers an OpenAI-shaped error. */
export function openAiErrorResponse(
  c: Context,
  status: ContentfulStatusCode,
  error: { message: string; code: string; param?: string | null },
) {
  return c.json(
    {
      error: {
        message: error.message,
        type: errorType(status),
        code: error.code,
        param: error.param ?? null,
      },
    },
    status,
  );
}

/**
 * Re-shapes an error response of the Switchboard routes' helpers (the body
 * limit, `handleError`) for an OpenAI client, keeping its status and
 * headers (`retry-after`, `x-session-id`). Other responses pass through.
 */
export async function asOpenAiErrorResponse(response: Response): Promise<Response> {
  if (response.status < 400) return response;
  const type = response.headers.get('content-type') ?? '';
  const text = await response.text();
  let body: unknown;
  try {
    body = type.includes('json') ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  const shaped =
    body === undefined
      ? {
          error: {
            message: text || 'Request failed',
            type: errorType(response.status),
            code: null,
            param: null,
          },
        }
      : toOpenAiErrorBody(response.status, body);
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  headers.set('content-type', 'application/json');
  return new Response(JSON.stringify(shaped), { status: response.status, headers });
}

/**
 * The OpenAI error body for what a handler threw: the status, code and safe
 * message come from `handleError`, the one place that maps errors to HTTP
 * (so store addresses and internal text stay out here too).
 */
export async function openAiErrorBodyFor(
  error: unknown,
  c: Context,
  log: (error: unknown) => void,
  exposeDetails: boolean,
): Promise<OpenAiErrorBody> {
  const response = await handleError(error, c, log, exposeDetails);
  return toOpenAiErrorBody(response.status, await response.json());
}
