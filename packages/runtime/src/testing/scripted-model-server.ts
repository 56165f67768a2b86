import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChatCompletionCreateParams } from 'openai/resources/chat/completions';
import { embeddingsBody, embeddingsRequest } from './scripted-embeddings.js';
import { checkChatRequest } from './scripted-request-checks.js';
import { completionBody, errorBody, resolveReply, streamChunks } from './scripted-responses.js';
import { type RecordedRequest, type ScriptEntry, type ScriptedReply, toReply } from './scripted-script.js';

/** Options of {@link createScriptedModelServer}. */
export interface ScriptedModelServerOptions {
  /** The replies, served one per chat-completions request, in order. More can be added with `push`. */
  script?: readonly ScriptEntry[];
  /** Default 0: any free port on 127.0.0.1. */
  port?: number;
  /** The `model` reported in responses. Default: the model the request named. */
  model?: string;
  /**
   * Answers every chat-completions request that comes after the script ran
   * out, so that the server is a stand-in model (an example that runs
   * offline); such calls are not unscripted. Without it, they fail loudly.
   */
  fallback?: ScriptEntry;
}

/** A running scripted model server. */
export interface ScriptedModelServer {
  /** The base URL including `/v1`, for the `openai` client's `baseURL`. */
  readonly url: string;
  /** Every request received, in arrival order (scripted or not). */
  readonly requests: readonly RecordedRequest[];
  /** The chat-completions requests that arrived after the script ran out. */
  readonly unscriptedCalls: readonly RecordedRequest[];
  /** Everything that went wrong: unscripted calls, rejected requests, failing script functions. */
  readonly problems: readonly string[];
  /** How many script entries have not been served yet. */
  readonly remaining: number;
  /** Appends entries to the script. */
  push(...entries: ScriptEntry[]): void;
  /** Throws when an entry was not served or anything in {@link problems} happened. */
  assertDone(): void;
  /** Stops the server, dropping open connections. */
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 10 * 1024 * 1024;

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    request.on('data', (part: Buffer) => {
      size += part.length;
      if (size > MAX_BODY_BYTES) request.destroy(new Error('request body too large'));
      else parts.push(part);
    });
    request.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    request.on('error', reject);
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

function waitFor(ms: number, request: IncomingMessage): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      request.off('close', onClose);
      resolve(true);
    }, ms);
    const onClose = () => {
      clearTimeout(timer);
      resolve(false);
    };
    request.once('close', onClose);
  });
}

/** The text of the last message, for error messages that say which call was unscripted. */
function lastMessageText(body: ChatCompletionCreateParams | undefined): string {
  const last = body?.messages?.at(-1);
  const content = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? null);
  return content.length > 120 ? `${content.slice(0, 117)}…` : content;
}

/**
 * Starts an OpenAI-compatible chat-completions server on loopback that answers
 * from a script, for testing LLM agents and routers through the real `openai`
 * client. It records every request; checks requests the way the real API
 * would (a tool result without its call, a strict schema that is not strict →
 * 400); streams in OpenAI's SSE format (`stream: true`, with a usage chunk
 * when `stream_options.include_usage`); and fails loudly on an unscripted
 * call: a 500 whose body says so, recorded in `unscriptedCalls`, and a throw
 * from `assertDone()`.
 *
 * It also answers `POST /v1/embeddings`, unscripted and deterministic: each
 * text's vector is a hashed bag of its words (`dimensions` long, default
 * 512, unit length), so texts sharing words are near by cosine. Embedding
 * requests are recorded in `requests` and take no script entry.
 *
 * @example
 * ```ts
 * const server = await createScriptedModelServer({
 *   script: [
 *     { toolCalls: [{ name: 'add', arguments: { a: 2, b: 2 } }] },
 *     { content: '2 + 2 = 4', usage: { inputTokens: 20, outputTokens: 6 } },
 *   ],
 * });
 * const client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
 * // … run the code under test …
 * expect(server.requests[1]?.body.messages.at(-1)).toMatchObject({ role: 'tool' });
 * server.assertDone();
 * await server.close();
 * ```
 */
export async function createScriptedModelServer({
  script = [],
  port = 0,
  model,
  fallback,
}: ScriptedModelServerOptions = {}): Promise<ScriptedModelServer> {
  const entries: ScriptEntry[] = [...script];
  const requests: RecordedRequest[] = [];
  const unscriptedCalls: RecordedRequest[] = [];
  const problems: string[] = [];
  let cursor = 0;
  let completionCount = 0;
  let callCount = 0;

  async function nextReply(record: RecordedRequest): Promise<ScriptedReply | undefined> {
    const index = cursor;
    const scripted = entries[index];
    const entry = scripted ?? fallback;
    if (entry === undefined) return undefined;
    if (scripted !== undefined) {
      cursor++;
      record.scriptIndex = index;
    }
    return toReply(typeof entry === 'function' ? await entry(record) : entry);
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const text = await readBody(request);
    const body = parseJson(text) as ChatCompletionCreateParams;
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    const method = request.method ?? 'GET';
    const record: RecordedRequest = { index: requests.length, method, path, headers: request.headers, body };
    requests.push(record);
    const where = `request #${record.index} (${method} ${path})`;

    if (method === 'POST' && path === '/v1/embeddings') {
      const asked = embeddingsRequest(body);
      if (!asked.ok) {
        problems.push(`${where} was rejected: ${asked.problem}`);
        sendJson(response, 400, errorBody(asked.problem, 'invalid_request_error'));
      } else sendJson(response, 200, embeddingsBody(asked.texts, asked));
      return;
    }
    if (method !== 'POST' || path !== '/v1/chat/completions') {
      problems.push(
        `${where}: the scripted model server only serves POST /v1/chat/completions and /v1/embeddings`,
      );
      sendJson(
        response,
        404,
        errorBody(`No route ${method} ${path} on the scripted model server`, 'not_found'),
      );
      return;
    }
    const rejections = body === undefined ? ['the body is not valid JSON'] : checkChatRequest(body);
    if (rejections.length > 0) {
      problems.push(`${where} was rejected: ${rejections.join('; ')}`);
      sendJson(response, 400, errorBody(rejections.join('; '), 'invalid_request_error'));
      return;
    }

    let reply: ScriptedReply | undefined;
    try {
      reply = await nextReply(record);
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      problems.push(`${where}: script entry ${record.scriptIndex ?? '(fallback)'} threw: ${detail}`);
      sendJson(
        response,
        500,
        errorBody(`Scripted model server: script entry threw: ${detail}`, 'scripted_server_error'),
      );
      return;
    }
    if (reply === undefined) {
      unscriptedCalls.push(record);
      const message = `Scripted model server: unscripted call — all ${entries.length} script entries were used; the call's last message: ${JSON.stringify(lastMessageText(body))}`;
      problems.push(`${where}: ${message}`);
      sendJson(response, 500, errorBody(message, 'scripted_server_error', 'unscripted_call'));
      return;
    }

    if (reply.delayMs && !(await waitFor(reply.delayMs, request))) return;
    if (reply.error) {
      const {
        status,
        message: errorMessage = `scripted error ${status}`,
        type = 'scripted_error',
        code,
      } = reply.error;
      sendJson(response, status, errorBody(errorMessage, type, code ?? null));
      return;
    }
    const resolved = resolveReply(reply, {
      id: `chatcmpl-scripted-${++completionCount}`,
      model: model ?? body.model,
      promptText: JSON.stringify(body.messages),
      nextCallId: () => `call_${++callCount}`,
    });
    if (body.stream !== true) {
      sendJson(response, 200, completionBody(resolved));
      return;
    }
    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    const includeUsage = body.stream_options?.include_usage === true;
    for (const chunk of streamChunks(resolved, { includeUsage }))
      response.write(`data: ${JSON.stringify(chunk)}\n\n`);
    response.end('data: [DONE]\n\n');
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      problems.push(
        `the scripted model server failed: ${error instanceof Error ? error.message : String(error)}`,
      );
      if (!response.headersSent)
        sendJson(response, 500, errorBody('Scripted model server failure', 'scripted_server_error'));
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port: actualPort } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${actualPort}/v1`,
    requests,
    unscriptedCalls,
    problems,
    get remaining() {
      return entries.length - cursor;
    },
    push(...more) {
      entries.push(...more);
    },
    assertDone() {
      const issues = [...problems];
      const left = entries.length - cursor;
      if (left > 0) issues.push(`${left} of ${entries.length} script entries were never requested`);
      if (issues.length > 0) throw new Error(`Scripted model server: ${issues.join('\n')}`);
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
