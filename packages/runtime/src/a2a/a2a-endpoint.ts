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
import type { Caller, ServerBackend } from '../backend/server-backend.js';
import { CALLER_KEY, SIGNAL_KEY } from './a2a-caller.js';
import { buildAgentCard } from './a2a-card.js';
import { a2aErrorOf } from './a2a-errors.js';
import { frameOf } from './a2a-framing.js';
import type { A2aOptions } from './a2a-options.js';
import { SwitchboardA2aHandler } from './a2a-request-handler.js';

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

const isStream = (value: unknown): value is AsyncGenerator<JsonRpcReply, void, undefined> =>
  typeof value === 'object' && value !== null && Symbol.asyncIterator in value;

/** Reads a stream nobody listens to to its end (its errors were logged where they arose). */
async function drain(stream: AsyncGenerator<JsonRpcReply, void, undefined>): Promise<void> {
  try {
    for (let next = await stream.next(); !next.done; next = await stream.next());
  } catch {
    // A notification has no one to tell.
  }
}

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
      // Bounded before the SDK reads it: its conversions recurse, and a deep enough part overflows the stack.
      const framing = frameOf(await c.req.text());
      if (framing.kind === 'error') return c.json(framing.reply);
      const { request, id, notification } = framing;
      // The spec lets a client name the version as a query parameter where it cannot set headers.
      const version = c.req.header(A2A_VERSION_HEADER) ?? c.req.query(A2A_VERSION_HEADER) ?? '0.3';
      if (version !== A2A_PROTOCOL_VERSION) {
        if (notification) return c.body(null, 204);
        const error = new VersionNotSupportedError(
          `This agent speaks A2A ${A2A_PROTOCOL_VERSION}: send the header ${A2A_VERSION_HEADER}: ${A2A_PROTOCOL_VERSION}`,
        );
        return c.json(errorReply(error, id));
      }
      const context = new ServerCallContext({ requestedVersion: version });
      context.state.set(CALLER_KEY, caller);
      context.state.set(SIGNAL_KEY, c.req.raw.signal);
      const reply = await transport.handle(request, context);
      if (notification) {
        // JSON-RPC 2.0 §4.1: the request is carried out, and nothing is answered.
        if (isStream(reply)) await drain(reply);
        return c.body(null, 204);
      }
      if (!isStream(reply)) return c.json(reply);
      // Errors before the first event (an unknown task, a busy session) still get a JSON answer.
      let first: IteratorResult<JsonRpcReply, void>;
      try {
        first = await reply.next();
      } catch (error) {
        return c.json(errorReply(error, id));
      }
      const encoder = new TextEncoder();
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          try {
            if (!first.done) {
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
        async cancel() {
          await reply.return();
        },
      });
      return new Response(body, {
        status: 200,
        headers: { ...SSE_HEADERS, 'x-request-id': caller.requestId },
      });
    },
  };
}
