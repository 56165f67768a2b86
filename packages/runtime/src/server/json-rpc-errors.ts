import {
  JSON_RPC_INTERNAL_ERROR,
  JSON_RPC_INVALID_REQUEST,
  jsonRpcError,
} from '../backend/json-rpc-error.js';

/** The JSON error body of the Switchboard routes: `{ error: { code, message, … } }`. */
function switchboardErrorOf(body: unknown): Record<string, unknown> | undefined {
  if (typeof body !== 'object' || body === null || 'jsonrpc' in body) return undefined;
  const error = (body as { error?: unknown }).error;
  if (typeof error !== 'object' || error === null) return undefined;
  return typeof (error as { code?: unknown }).code === 'string'
    ? (error as Record<string, unknown>)
    : undefined;
}

/**
 * Re-shapes an error response of the Switchboard routes' helpers (the auth
 * and rate-limit refusals, the body limit, a store outage or a shutdown
 * answered by `handleError`) for a JSON-RPC client of A2A or MCP: the same
 * status and headers, with a JSON-RPC error reply (id null, as the request
 * was not read) whose `data` keeps Switchboard's `code` and the fields
 * beside it. Other responses, JSON-RPC replies included, pass through.
 */
export async function asJsonRpcErrorResponse(response: Response): Promise<Response> {
  if (response.status < 400 || !(response.headers.get('content-type') ?? '').includes('json'))
    return response;
  const text = await response.clone().text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return response;
  }
  const error = switchboardErrorOf(body);
  if (!error) return response;
  const { message, issues: _issues, ...data } = error;
  const code = response.status >= 500 ? JSON_RPC_INTERNAL_ERROR : JSON_RPC_INVALID_REQUEST;
  const reply = jsonRpcError(null, code, typeof message === 'string' ? message : 'Request failed', data);
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(JSON.stringify(reply), { status: response.status, headers });
}
