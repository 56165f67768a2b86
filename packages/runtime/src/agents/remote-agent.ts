import { createHash } from 'node:crypto';
import { AgentError, ConfigurationError } from '@switchboard/core';
import { z } from 'zod';
import { type Agent, type AgentContext, defineAgent } from './agent.js';
import { NestingDepthError, nestingDepth } from './orchestrator-agent.js';

/** Options of {@link remoteAgent}. */
export interface RemoteAgentOptions {
  name: string;
  description: string;
  /**
   * The base URL of another Switchboard server (its `POST /v1/chat` is
   * called), or the full URL of any endpoint that speaks the same JSON.
   */
  url: string;
  /** Sent with every request, e.g. `{ authorization: 'Bearer …' }`. */
  headers?: Record<string, string>;
  keywords?: string[];
  capabilities?: string[];
  /** Overrides the app's per-agent timeout. */
  timeoutMs?: number;
  /**
   * The largest answer read, in bytes (default 1 MiB): past it the
   * connection is closed and the call fails, so a remote cannot fill this
   * process's memory.
   */
  maxResponseBytes?: number;
}

/**
 * A remote agent's failure, with a code saying what went wrong: the server
 * could not be reached (`remote_unreachable`), answered 5xx
 * (`remote_unavailable`) — both retryable — or refused the call with a 4xx
 * (`remote_rejected`), or answered something else than a reply
 * (`remote_invalid_reply`).
 */
export class RemoteAgentError extends AgentError {
  override readonly code:
    | 'remote_unreachable'
    | 'remote_unavailable'
    | 'remote_rejected'
    | 'remote_invalid_reply';
  /** The HTTP status, when the server answered. */
  readonly status?: number;
  constructor({
    agent,
    code,
    message,
    status,
    cause,
  }: {
    agent: string;
    code: RemoteAgentError['code'];
    message: string;
    status?: number;
    cause?: unknown;
  }) {
    super({
      agent,
      message,
      cause,
      retryable: code === 'remote_unreachable' || code === 'remote_unavailable',
    });
    this.code = code;
    if (status !== undefined) this.status = status;
  }
}

const RemoteReplySchema = z.object({ reply: z.string(), status: z.string().optional() });

function chatUrl(url: string, name: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigurationError({ message: `Remote agent '${name}' has an invalid url '${url}'` });
  }
  if (parsed.pathname === '/' || parsed.pathname === '') parsed.pathname = '/v1/chat';
  return parsed.toString();
}

/**
 * The remote session for a local one: its own id (so that two servers
 * sharing one Redis never wait on each other's lease), stable across turns
 * so that the remote keeps the conversation.
 */
export function remoteSessionId(sessionId: string, agent: string): string {
  const id = `${sessionId}.${agent}`;
  if (id.length <= 128) return id;
  // Too long for a session id: a digest of the whole id keeps long ids that share an ending apart.
  return `${createHash('sha256').update(id).digest('hex')}.${agent}`.slice(0, 128);
}

/**
 * `maxBytes` when it is a positive whole number of bytes.
 * @throws ConfigurationError naming `owner` otherwise.
 */
export function checkMaxResponseBytes(owner: string, maxBytes: number): number {
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0)
    throw new ConfigurationError({
      message: `${owner} has an invalid maxResponseBytes ${maxBytes}: use a positive whole number of bytes`,
    });
  return maxBytes;
}

/**
 * Sends a request to a remote agent: a host it cannot reach is a
 * `remote_unreachable` {@link RemoteAgentError} naming the agent (an abort
 * stays the abort).
 */
export async function reachRemote(
  endpoint: string,
  name: string,
  send: () => Promise<Response>,
  signal: AbortSignal | null | undefined,
): Promise<Response> {
  try {
    return await send();
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw new RemoteAgentError({
      agent: name,
      code: 'remote_unreachable',
      message: `could not reach ${endpoint}`,
      cause: error,
    });
  }
}

/**
 * The error of a remote's non-2xx answer: a `NestingDepthError` when it
 * refused the nesting `depth` the call announced, otherwise a
 * `remote_unavailable` (5xx) or `remote_rejected` {@link RemoteAgentError}
 * with the reason its error body gives (Switchboard's or JSON-RPC's), or the
 * start of its text.
 */
export function refusalOf(
  endpoint: string,
  name: string,
  status: number,
  text: string,
  depth: number,
): Error {
  let code: string | undefined;
  let reason = text.slice(0, 200);
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown; code?: unknown } | string };
    if (typeof body.error === 'string') reason = body.error.slice(0, 200);
    else if (typeof body.error?.message === 'string') {
      reason = body.error.message.slice(0, 200);
      if (typeof body.error.code === 'string') code = body.error.code;
    }
  } catch {
    // Not JSON: the text itself.
  }
  if (code === 'nesting_depth_exceeded')
    return new NestingDepthError({ agent: name, depth, maxDepth: depth - 1 });
  return new RemoteAgentError({
    agent: name,
    code: status >= 500 ? 'remote_unavailable' : 'remote_rejected',
    status,
    message: `${endpoint} answered ${status}${reason ? `: ${reason}` : ''}`,
  });
}

/**
 * The answer's body as text, read up to `maxBytes`: a longer one (announced
 * or sent) cancels the body, which closes the connection, and fails the call.
 */
export async function readBody(
  response: Response,
  maxBytes: number,
  endpoint: string,
  name: string,
): Promise<string> {
  const tooLarge = () =>
    new AgentError({
      agent: name,
      message: `${endpoint} answered with more than ${maxBytes} bytes (maxResponseBytes)`,
    });
  const announced = Number(response.headers.get('content-length'));
  if (announced > maxBytes || !response.body) {
    await response.body?.cancel().catch(() => undefined);
    if (announced > maxBytes) throw tooLarge();
    return '';
  }
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

async function callRemote(
  endpoint: string,
  name: string,
  headers: Record<string, string>,
  maxResponseBytes: number,
  message: string,
  context: AgentContext,
) {
  const { request, signal } = context;
  const body: Record<string, unknown> = { message, sessionId: remoteSessionId(request.sessionId, name) };
  if (request.userId) body.userId = request.userId;
  // How deep this call goes, so that servers calling each other in a loop are stopped by the depth limit.
  const depth = nestingDepth(context.conversation) + 1;
  const response = await reachRemote(
    endpoint,
    name,
    () =>
      fetch(endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          'x-request-id': request.requestId,
          ...headers,
          'x-switchboard-depth': String(depth),
        },
        body: JSON.stringify(body),
        signal,
      }),
    signal,
  );
  const text = await readBody(response, maxResponseBytes, endpoint, name);
  if (!response.ok) throw refusalOf(endpoint, name, response.status, text, depth);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const reply = RemoteReplySchema.safeParse(json);
  if (!reply.success)
    throw new RemoteAgentError({
      agent: name,
      code: 'remote_invalid_reply',
      message: `${endpoint} answered without a "reply" string`,
    });
  if (reply.data.status === 'failed')
    throw new AgentError({ agent: name, message: `the remote turn failed: ${reply.data.reply}` });
  return reply.data.reply;
}

/**
 * An agent served over HTTP, such as another Switchboard server: each call
 * posts `{ message, sessionId, userId }` and uses the `reply` of the answer.
 * The remote keeps its own session per local session, so it remembers the
 * conversation. Errors, non-2xx answers, an answer over `maxResponseBytes`
 * and a failed remote turn become an error `tool` message; the call is
 * aborted on timeout.
 *
 * @example
 * ```ts
 * const billing = remoteAgent({ name: 'billing', description: 'Invoices and refunds', url: 'http://billing:3000' });
 * const app = new App({ name: 'front-desk', agents: [billing, faq] });
 * ```
 */
export function remoteAgent({
  name,
  description,
  url,
  headers = {},
  keywords,
  capabilities,
  timeoutMs,
  maxResponseBytes = 1024 * 1024,
}: RemoteAgentOptions): Agent {
  const endpoint = chatUrl(url, name);
  checkMaxResponseBytes(`Remote agent '${name}'`, maxResponseBytes);
  return defineAgent({
    name,
    description,
    keywords,
    capabilities,
    timeoutMs,
    metadata: { remote: endpoint },
    run: (message, context) => callRemote(endpoint, name, headers, maxResponseBytes, message, context),
  });
}
