/**
 * JSON-RPC 2.0 error replies, as the two JSON-RPC surfaces (A2A and MCP)
 * answer requests refused before their SDK reads them.
 *
 * @module
 */
import type { JsonBoundsProblem } from './json-bounds.js';

/** JSON-RPC's "Parse error": the body is not JSON. */
export const JSON_RPC_PARSE_ERROR = -32700;
/** JSON-RPC's "Invalid Request": the request is not one the server takes. */
export const JSON_RPC_INVALID_REQUEST = -32600;
/** JSON-RPC's "Invalid params": the method's parameters are out of bounds. */
export const JSON_RPC_INVALID_PARAMS = -32602;
/** JSON-RPC's "Internal error": the server could not answer (a store outage, a shutdown). */
export const JSON_RPC_INTERNAL_ERROR = -32603;

/** A JSON-RPC request id, or null when the request's could not be read. */
export type JsonRpcId = string | number | null;

/** A JSON-RPC error reply. */
export interface JsonRpcErrorReply {
  jsonrpc: '2.0';
  id: JsonRpcId;
  error: { code: number; message: string; data?: unknown };
}

/** The id of a parsed JSON-RPC request (null when it has none, or one of the wrong type). */
export function jsonRpcIdOf(request: unknown): JsonRpcId {
  const id = typeof request === 'object' && request !== null ? (request as { id?: unknown }).id : undefined;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** A JSON-RPC error reply to the request `id`. */
export function jsonRpcError(
  id: JsonRpcId,
  code: number,
  message: string,
  data?: unknown,
): JsonRpcErrorReply {
  const error: JsonRpcErrorReply['error'] = { code, message };
  if (data !== undefined) error.data = data;
  return { jsonrpc: '2.0', id, error };
}

/** The reply to a request nested or sized past the JSON bound: Invalid params, saying where. */
export function jsonRpcBoundsError(request: unknown, problem: JsonBoundsProblem): JsonRpcErrorReply {
  const where = problem.path.length > 0 ? ` (at ${problem.path.join('.')})` : '';
  return jsonRpcError(
    jsonRpcIdOf(request),
    JSON_RPC_INVALID_PARAMS,
    `Invalid params: ${problem.message}${where}`,
  );
}
