import { type AgentCard, type Message, type StreamResponse, type Task, TaskState } from '@a2a-js/sdk';
import {
  type Client,
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import { A2AError } from '@a2a-js/sdk/errors';
import { AgentError, ConfigurationError, createId } from '@switchboard/core';
import { type Agent, type AgentContext, defineAgent } from '../agents/agent.js';
import { nestingDepth } from '../agents/orchestrator-agent.js';
import {
  checkMaxResponseBytes,
  RemoteAgentError,
  reachRemote,
  readBody,
  refusalOf,
  remoteSessionId,
} from '../agents/remote-agent.js';
import { withAbsoluteUrls } from './a2a-card.js';
import { a2aMessage, answerOf, TERMINAL_STATES, textOf, textPart } from './a2a-parts.js';

/** Options of {@link a2aAgent}. */
export interface A2aAgentOptions {
  /**
   * Where the agent is: its base URL (its card is read from
   * `/.well-known/agent-card.json` below it) or the full URL of its card
   * (ending in `.json`).
   */
  url: string;
  /** The agent's name in this app (default: the card's name, made a valid agent name). */
  name?: string;
  /** What the agent does, for the orchestrator (default: the card's description). */
  description?: string;
  /** Sent with every request, the card's included, e.g. `{ authorization: 'Bearer …' }`. */
  headers?: Record<string, string>;
  /** Overrides the app's per-agent timeout; also bounds reading the card (default 10 000 ms there). */
  timeoutMs?: number;
  /** For keyword routers (default: the tags of the card's skills). */
  keywords?: string[];
  capabilities?: string[];
  /** The largest answer read, in bytes (default 1 MiB), as for `remoteAgent`. */
  maxResponseBytes?: number;
}

/** The card's URL for the agent at `url`. */
function cardUrlOf(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigurationError({ message: `a2aAgent: invalid url '${url}'` });
  }
  if (!['http:', 'https:'].includes(parsed.protocol))
    throw new ConfigurationError({ message: `a2aAgent: url must be http(s), not '${url}'` });
  if (parsed.pathname.endsWith('.json')) return parsed.toString();
  if (!parsed.pathname.endsWith('/')) parsed.pathname += '/';
  return new URL('.well-known/agent-card.json', parsed).toString();
}

/** A card's name as an agent name: letters, digits, `_` and `-`, at most 64 characters. */
function agentNameOf(cardName: string): string {
  const name = cardName
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64);
  return name.length > 0 ? name : 'a2a-agent';
}

/**
 * `fetch` for one remote: unreachable hosts, non-2xx answers and answers
 * over `maxBytes` become {@link RemoteAgentError}s naming the agent; a JSON
 * answer is read within the limit (a stream's events are bounded by the SDK).
 */
function remoteFetch(name: string, maxBytes: number): typeof fetch {
  return async (input, init) => {
    const target = new URL(String(input instanceof Request ? input.url : input));
    const endpoint = target.origin + target.pathname;
    const response = await reachRemote(endpoint, name, () => fetch(input, init), init?.signal);
    if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream') && response.ok)
      return response;
    const text = await readBody(response, maxBytes, endpoint, name);
    if (!response.ok) {
      // The depth this call announced (a Switchboard remote refuses past its limit).
      const depth = Number(new Headers(init?.headers).get('x-switchboard-depth'));
      throw refusalOf(endpoint, name, response.status, text, depth);
    }
    return new Response(text, { status: response.status, headers: response.headers });
  };
}

/** Reads the card, with the agent's headers, within `timeoutMs`. */
async function readCard(
  cardUrl: string,
  name: string,
  fetchImpl: typeof fetch,
  headers: Record<string, string>,
  timeoutMs: number,
) {
  const resolver = new DefaultAgentCardResolver({
    legacyCompat: { enabled: true },
    fetchImpl: (input, init) =>
      fetchImpl(input, {
        ...init,
        headers: { ...headers, ...(init?.headers as Record<string, string>) },
        signal: AbortSignal.timeout(timeoutMs),
      }),
  });
  try {
    return await resolver.resolve(cardUrl, '');
  } catch (error) {
    if (RemoteAgentError.isInstance(error)) throw error;
    throw new RemoteAgentError({
      agent: name,
      code: 'remote_invalid_reply',
      message: `${cardUrl} is not an A2A agent card`,
      cause: error,
    });
  }
}

/** Why a task that ended without an answer ended. */
function endOf(task: Pick<Task, 'status'>, name: string): Error | undefined {
  const state = task.status?.state;
  const said = textOf(task.status?.message?.parts);
  const detail = said ? `: ${said.slice(0, 500)}` : '';
  if (state === TaskState.TASK_STATE_FAILED)
    return new AgentError({ agent: name, message: `the remote task failed${detail}` });
  if (state === TaskState.TASK_STATE_REJECTED)
    return new AgentError({ agent: name, message: `the remote agent refused the task${detail}` });
  if (state === TaskState.TASK_STATE_CANCELED)
    return new AgentError({ agent: name, message: `the remote task was canceled${detail}` });
  if (state === TaskState.TASK_STATE_AUTH_REQUIRED)
    return new RemoteAgentError({
      agent: name,
      code: 'remote_rejected',
      message: `the remote agent needs other credentials${detail}`,
    });
  return undefined;
}

/** A remote error as this agent's error: A2A errors the remote answered are rejections. */
function callError(error: unknown, name: string, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason;
  if (AgentError.isInstance(error)) return error;
  if (error instanceof A2AError)
    return new RemoteAgentError({
      agent: name,
      code: 'remote_rejected',
      message: `the remote agent answered an error: ${error.message}`,
    });
  return new RemoteAgentError({
    agent: name,
    code: 'remote_invalid_reply',
    message: 'the remote agent answered something else than A2A',
    cause: error,
  });
}

/**
 * A remote A2A agent (any framework's: Switchboard, ADK, Strands, …) as an
 * agent of this app, found through its agent card. Each call sends the
 * task as a message in a context of its own per local session (so that the
 * remote keeps the conversation); when the card says the agent streams,
 * the answer streams in as the remote produces it. A failed, refused or
 * canceled remote task, an unreachable remote, an error answer and a
 * timeout become an error reply the orchestrator sees. A task that needs
 * input answers with the remote's question.
 *
 * Resolves once the card is read; with `name` and `description` given, an
 * unreachable remote does not stop the app from starting: the card is read
 * again on the first call.
 *
 * @example
 * ```ts
 * import { a2aAgent } from '@switchboard/runtime/a2a';
 *
 * const weather = await a2aAgent({ url: 'http://weather-agent:9000', keywords: ['weather', 'forecast'] });
 * const app = new App({ name: 'front-desk', agents: [weather, faq] });
 * ```
 */
export async function a2aAgent({
  url,
  name,
  description,
  headers = {},
  timeoutMs,
  keywords,
  capabilities,
  maxResponseBytes = 1024 * 1024,
}: A2aAgentOptions): Promise<Agent> {
  const cardUrl = cardUrlOf(url);
  checkMaxResponseBytes('a2aAgent', maxResponseBytes);
  if (timeoutMs !== undefined && !(timeoutMs > 0))
    throw new ConfigurationError({ message: 'a2aAgent: invalid timeoutMs' });
  const label = name ?? cardUrl;
  const fetchImpl = remoteFetch(label, maxResponseBytes);
  const factory = new ClientFactory({
    transports: [
      new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } }),
      new RestTransportFactory({ fetchImpl, legacyCompat: { enabled: true } }),
    ],
  });
  const connect = async () => {
    const card = await readCard(cardUrl, label, fetchImpl, headers, timeoutMs ?? 10_000);
    return { card, client: await factory.createFromAgentCard(withAbsoluteUrls(card, cardUrl)) };
  };

  let connected: Promise<{ card: AgentCard; client: Client }> | undefined = connect();
  let card: AgentCard | undefined;
  try {
    ({ card } = await connected);
  } catch (error) {
    if (name === undefined || description === undefined) throw error;
    connected = undefined;
  }
  const connection = () => {
    connected ??= connect();
    connected.catch(() => {
      connected = undefined;
    });
    return connected;
  };

  const agentName = name ?? agentNameOf(card?.name ?? '');
  const tags = [...new Set(card?.skills.flatMap((skill) => skill.tags) ?? [])];
  return defineAgent({
    name: agentName,
    description: description ?? card?.description ?? '',
    keywords: keywords ?? (tags.length > 0 ? tags : undefined),
    capabilities: capabilities ?? card?.skills.map((skill) => skill.name),
    timeoutMs,
    metadata: { a2a: cardUrl },
    run: async (message, context) => {
      const { card: current, client } = await connection().catch((error: unknown) => {
        throw callError(error, agentName, context.signal);
      });
      return current.capabilities?.streaming
        ? streamCall(client, agentName, message, context, headers, maxResponseBytes)
        : await sendCall(client, agentName, message, context, headers);
    },
  });
}

/** The request: the task as a text message, in the local session's own remote context. */
function request(agentName: string, message: string, context: AgentContext, headers: Record<string, string>) {
  const contextId = remoteSessionId(context.request.sessionId, agentName);
  const sent: Message = a2aMessage({
    messageId: createId('msg'),
    role: 'user',
    parts: [textPart(message)],
    contextId,
  });
  const params = { tenant: '', message: sent, configuration: undefined, metadata: undefined };
  const options = {
    signal: context.signal,
    serviceParameters: {
      ...headers,
      'x-request-id': context.request.requestId,
      // How deep this call goes, so that Switchboard servers calling each other in a loop are stopped.
      'x-switchboard-depth': String(nestingDepth(context.conversation) + 1),
    },
  };
  return { params, options };
}

async function sendCall(
  client: Client,
  agentName: string,
  message: string,
  context: AgentContext,
  headers: Record<string, string>,
) {
  const { params, options } = request(agentName, message, context, headers);
  let result: Message | Task;
  try {
    result = await client.sendMessage(params, options);
  } catch (error) {
    throw callError(error, agentName, context.signal);
  }
  if ('messageId' in result) return textOf(result.parts);
  const ended = endOf(result, agentName);
  if (ended) throw ended;
  return { content: answerOf(result), metadata: { a2a: { taskId: result.id, contextId: result.contextId } } };
}

async function* streamCall(
  client: Client,
  agentName: string,
  message: string,
  context: AgentContext,
  headers: Record<string, string>,
  maxBytes: number,
): AsyncGenerator<string, { metadata: Record<string, unknown> } | undefined> {
  const { params, options } = request(agentName, message, context, headers);
  /** What was yielded of each artifact, to tell an appended chunk from a replacement. */
  const artifacts = new Map<string, string>();
  let size = 0;
  let task: { id: string; contextId: string } | undefined;
  let last: Pick<Task, 'status'> | undefined;
  let answered = false;
  const emit = function* (text: string) {
    size += Buffer.byteLength(text);
    if (size > maxBytes)
      throw new AgentError({
        agent: agentName,
        message: `the remote answered more than ${maxBytes} bytes (maxResponseBytes)`,
      });
    if (text.length > 0) {
      answered = true;
      yield text;
    }
  };
  try {
    for await (const event of client.sendMessageStream(params, options) as AsyncGenerator<StreamResponse>) {
      const payload = event.payload;
      if (!payload) continue;
      if (payload.$case === 'message') {
        yield* emit(textOf(payload.value.parts));
        continue;
      }
      if (payload.$case === 'task') {
        task = { id: payload.value.id, contextId: payload.value.contextId };
        last = payload.value;
        for (const artifact of payload.value.artifacts) {
          const text = textOf(artifact.parts);
          artifacts.set(artifact.artifactId, text);
          yield* emit(text);
        }
      } else if (payload.$case === 'artifactUpdate' && payload.value.artifact) {
        const { artifactId, parts } = payload.value.artifact;
        const text = textOf(parts);
        const before = artifacts.get(artifactId) ?? '';
        if (payload.value.append || before.length === 0) {
          artifacts.set(artifactId, before + text);
          yield* emit(text);
        } else if (text.startsWith(before)) {
          artifacts.set(artifactId, text);
          yield* emit(text.slice(before.length));
        } else {
          throw new RemoteAgentError({
            agent: agentName,
            code: 'remote_invalid_reply',
            message: 'the remote agent rewrote an answer it had streamed',
          });
        }
      } else if (payload.$case === 'statusUpdate') {
        last = payload.value;
      }
      if (last?.status && TERMINAL_STATES.has(last.status.state)) {
        if (last.status.state !== TaskState.TASK_STATE_COMPLETED) break;
      }
    }
  } catch (error) {
    throw callError(error, agentName, context.signal);
  }
  const ended = last ? endOf(last, agentName) : undefined;
  if (ended) throw ended;
  // A task that needs input, or a completed one that said its answer in its status: that text is the reply.
  if (!answered) yield* emit(textOf(last?.status?.message?.parts));
  return task ? { metadata: { a2a: { taskId: task.id, contextId: task.contextId } } } : undefined;
}
