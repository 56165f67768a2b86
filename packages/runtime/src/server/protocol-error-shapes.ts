import type { MiddlewareHandler } from 'hono';
import { asJsonRpcErrorResponse } from './json-rpc-errors.js';
import { asOpenAiErrorResponse } from './openai-errors.js';

/** True for the routes that answer in the OpenAI error shape. */
function speaksOpenAi(path: string): boolean {
  return (
    path === '/v1/chat/completions' ||
    path === '/v1/models' ||
    path.startsWith('/v1/models/') ||
    path === '/v1/responses' ||
    path.startsWith('/v1/responses/')
  );
}

/**
 * Answers every error of a protocol's routes in that protocol's shape, also
 * those no route handler wrote: an auth or rate-limit refusal, and what
 * `onError` answers for a throw before the handler ran (a rate limiter whose
 * store is down). JSON-RPC errors at `jsonRpcPaths` (A2A, MCP), OpenAI's
 * `{ error: { message, type, param, code } }` on the OpenAI-compatible
 * routes. Registered before auth, so that it sees its refusals.
 */
export function protocolErrorShapes(jsonRpcPaths: readonly string[]): MiddlewareHandler {
  const jsonRpc = new Set(jsonRpcPaths);
  return async (c, next) => {
    await next();
    if (c.res.status < 400) return;
    const path = c.req.path;
    const reshape = jsonRpc.has(path)
      ? asJsonRpcErrorResponse
      : speaksOpenAi(path)
        ? asOpenAiErrorResponse
        : undefined;
    if (!reshape) return;
    const shaped = await reshape(c.res);
    if (shaped === c.res) return;
    // Unset first: Hono merges the old response's headers into a new one, content-length included.
    c.res = undefined;
    c.res = shaped;
  };
}
