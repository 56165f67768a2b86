import { parseBoundedJson } from '../backend/json-bounds.js';
import {
  JSON_RPC_INVALID_REQUEST,
  JSON_RPC_PARSE_ERROR,
  type JsonRpcErrorReply,
  type JsonRpcId,
  jsonRpcBoundsError,
  jsonRpcError,
} from '../backend/json-rpc-error.js';

/** What a body is as JSON-RPC 2.0, read before the A2A SDK sees it (the SDK answers every framing fault with -32602). */
export type JsonRpcFraming =
  | {
      kind: 'request';
      request: Record<string, unknown>;
      /** The request's id; null for a notification. */
      id: JsonRpcId;
      /** No `id` member: the client wants no reply (JSON-RPC 2.0 §4.1). */
      notification: boolean;
    }
  | { kind: 'error'; reply: JsonRpcErrorReply };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isValidId = (id: unknown): id is JsonRpcId =>
  typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)) || id === null;

/**
 * Reads one JSON-RPC request: a body that is not JSON is a parse error
 * (-32700); a batch, a non-object, a `jsonrpc` other than `"2.0"`, an id
 * that is not a string, integer or null, and a missing `method` are invalid
 * requests (-32600), answered with the request's id when it has a valid
 * one; a body nested past the JSON bound is invalid params (-32602).
 */
export function frameOf(text: string): JsonRpcFraming {
  const parsed = parseBoundedJson(text);
  if ('malformed' in parsed)
    return {
      kind: 'error',
      reply: jsonRpcError(null, JSON_RPC_PARSE_ERROR, 'Parse error: the body is not JSON'),
    };
  if ('problem' in parsed) return { kind: 'error', reply: jsonRpcBoundsError(parsed.value, parsed.problem) };
  const { value } = parsed;
  const invalid = (id: JsonRpcId, why: string): JsonRpcFraming => ({
    kind: 'error',
    reply: jsonRpcError(id, JSON_RPC_INVALID_REQUEST, `Invalid Request: ${why}`),
  });
  if (Array.isArray(value)) return invalid(null, 'batches are not supported: send one request per call');
  if (!isRecord(value)) return invalid(null, 'the body must be a JSON-RPC request object');
  if ('id' in value && !isValidId(value.id)) return invalid(null, 'id must be a string, an integer or null');
  const id = 'id' in value ? (value.id as JsonRpcId) : null;
  if (value.jsonrpc !== '2.0') return invalid(id, 'jsonrpc must be "2.0"');
  if (typeof value.method !== 'string' || value.method.length === 0)
    return invalid(id, 'method must be a non-empty string');
  return { kind: 'request', request: value, id, notification: !('id' in value) };
}
