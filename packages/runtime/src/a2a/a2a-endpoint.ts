import {
  A2A_PROTOCOL_VERSION,
  A2A_VERSION_HEADER,
  AgentCard,
  formatSSEErrorEvent,
  formatSSEEvent,
  SSE_HEADERS,
} from '@a2a-js/sdk';
import { VersionNotSupportedError } from '@a2a-js/sdk/errors';
import { JsonRpcTransportHandler, ServerCallContext } from '@a2a-js/sdk/server';
import type { Context } from 'hono';
import { parseBoundedJson } from '../backend/json-bounds.js';
import { jsonRpcBoundsError } from '../backend/json-rpc-error.js';
import type { Caller, ServerBackend } from '../backend/server-backend.js';
import { buildAgentCard } from './a2a-card.js';
import { a2aErrorOf } from './a2a-errors.js';
import type { A2aOptions } from './a2a-options.js';
import { CALLER_KEY, SwitchboardA2aHandler } from './a2a-request-handler.js';

/** The two A2A routes' handlers. */
export interface A2aEndpoint {
  /** `GET /.well-known/agent-card.json`. */
  card(c: Context): Response;
  /** `POST <path>`: one JSON-RPC request, answered with JSON or, for a stream, Server-Sent Events. */
  rpc(c: Context, caller: Caller): Promise<Response>;
}

/** The hosts whose `Host` header the card trusts without `trustedHosts`: only this machine can be reached there. */
const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

type JsonRpcReply = { jsonrpc: string; id: string | number | null; result?: unknown; error?: unknown };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isStream = (value: unknown): value is AsyncGenerator<JsonRpcReply, void, undefined> =>
  typeof value === 'object' && value !== null && Symbol.asyncIterator in value;

/** Builds the A2A endpoint over the app's backend (loaded on the first A2A request). */
export function createA2aEndpoint(
  backend: ServerBackend,
  {
    path,
    publicUrl,
    trustedHosts = [],
    card,
    maxMessageLength,
  }: A2aOptions & { path: string; maxMessageLength: number },
): A2aEndpoint {
  const base = publicUrl?.replace(/\/+$/, '');
  const trusted = new Set([...LOOPBACK_HOSTS, ...trustedHosts].map((host) => host.toLowerCase()));
  const cardFor = (origin: string) => buildAgentCard(backend, { url: `${base ?? origin}${path}`, card });
  /** The origin the card may name for a request: its own, when its `Host` is trusted; else none (the bare path). */
  const originOf = (requestUrl: string): string => {
    const { origin, host, hostname } = new URL(requestUrl);
    return trusted.has(host.toLowerCase()) || trusted.has(hostname.toLowerCase()) ? origin : '';
  };
  // A fixed card for the handler's own use; the route publishes one for each request's trusted origin.
  const fixedCard = cardFor('');
  const handler = new SwitchboardA2aHandler(backend, {
    maxMessageLength,
    entryPoint: path,
    card: () => fixedCard,
  });
  const transport = new JsonRpcTransportHandler(handler);
  const errorReply = (error: unknown, id: JsonRpcReply['id'] = null): JsonRpcReply => ({
    jsonrpc: '2.0',
    id,
    error: JsonRpcTransportHandler.mapToJSONRPCError(a2aErrorOf(error, backend.log)),
  });

  return {
    card(c) {
      c.header('cache-control', 'public, max-age=300');
      c.header('vary', 'host');
      return c.json(AgentCard.toJSON(cardFor(base ? '' : originOf(c.req.url))) as Record<string, unknown>);
    },
    async rpc(c, caller) {
      const version = c.req.header(A2A_VERSION_HEADER) ?? '0.3';
      if (version !== A2A_PROTOCOL_VERSION) {
        const error = new VersionNotSupportedError(
          `This agent speaks A2A ${A2A_PROTOCOL_VERSION}: send the header ${A2A_VERSION_HEADER}: ${A2A_PROTOCOL_VERSION}`,
        );
        return c.json(errorReply(error));
      }
      const context = new ServerCallContext({ requestedVersion: version });
      context.state.set(CALLER_KEY, caller);
      // Bounded before the SDK reads it: its conversions recurse, and a deep enough part overflows the stack.
      const text = await c.req.text();
      const parsed = parseBoundedJson(text);
      if ('problem' in parsed) return c.json(jsonRpcBoundsError(parsed.value, parsed.problem));
      const request = 'value' in parsed && isRecord(parsed.value) ? parsed.value : text;
      const reply = await transport.handle(request, context);
      if (!isStream(reply)) return c.json(reply);
      // Errors before the first event (an unknown task, a busy session) still get a JSON answer.
      let first: IteratorResult<JsonRpcReply, void>;
      try {
        first = await reply.next();
      } catch (error) {
        return c.json(errorReply(error));
      }
      const encoder = new TextEncoder();
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          let id: JsonRpcReply['id'] = null;
          try {
            if (!first.done) {
              id = first.value.id;
              controller.enqueue(encoder.encode(formatSSEEvent(first.value)));
            }
            for await (const event of { [Symbol.asyncIterator]: () => reply }) {
              controller.enqueue(encoder.encode(formatSSEEvent(event)));
            }
          } catch (error) {
            controller.enqueue(encoder.encode(formatSSEErrorEvent(errorReply(error, id))));
          }
          controller.close();
        },
      });
      return new Response(body, {
        status: 200,
        headers: { ...SSE_HEADERS, 'x-request-id': caller.requestId },
      });
    },
  };
}
