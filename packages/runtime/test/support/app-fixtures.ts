import { setTimeout as delay } from 'node:timers/promises';
import {
  AbstractOrchestrator,
  type AgentMeta,
  type Conversation,
  currentUserMessage,
  type Decision,
  latestToolResults,
  type MemoryScope,
  type MessageItem,
  RequestContext,
  routeToUser,
  type ToolMessage,
  toolCall,
} from '@switchboard/core';
import { type Agent, agentMeta, defineAgent } from '../../src/agents/agent.js';
import { App, type AppOptions } from '../../src/app.js';
import type { TurnEvent } from '../../src/engine/events.js';

/** Waits `ms` milliseconds, rejecting early when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return delay(ms, undefined, signal ? { signal } : undefined);
}

/** Replies `echo: <message>`. */
export function echoAgent(name = 'echo'): Agent {
  return defineAgent({
    name,
    description: 'Repeats the message',
    keywords: ['echo'],
    run: (message) => `echo: ${message}`,
  });
}

/** Streams `chunks` one by one (an async iterable), a few milliseconds apart. */
export function streamingAgent(
  name = 'streamer',
  chunks: readonly string[] = ['Hel', 'lo ', 'world'],
): Agent {
  return defineAgent({
    name,
    description: 'Streams its answer in chunks',
    async *run(_message, { signal }) {
      for (const chunk of chunks) {
        await sleep(2, signal);
        yield chunk;
      }
    },
  });
}

/** Always throws `new Error(message)`. */
export function failingAgent(name = 'broken', message = 'the weather service exploded'): Agent {
  return defineAgent({
    name,
    description: 'Always fails',
    run: () => {
      throw new Error(message);
    },
  });
}

/** Counts its calls in `getMemory(scope)` under the key `visits` and replies `visit <n>`. */
export function visitCounterAgent(name = 'counter', scope: MemoryScope = 'session'): Agent {
  return defineAgent({
    name,
    description: `Counts visits in ${scope} memory`,
    async run() {
      const result = await RequestContext.current()
        .getMemory(scope)
        .updateContent('visits', (visits: number) => visits + 1, 0);
      if (!result.success) throw result.error;
      return `visit ${result.data}`;
    },
  });
}

/** Timestamps (from `performance.now()`) of one agent run. */
export interface RunTiming {
  message: string;
  startedAt: number;
  endedAt?: number;
}

/** Waits `ms` (honouring its abort signal) and replies `<name> done: <message>`; records each run's timing. */
export function slowAgent(name: string, ms: number): Agent & { runs: RunTiming[] } {
  const runs: RunTiming[] = [];
  const agent = defineAgent({
    name,
    description: `Answers after ${ms} ms`,
    async run(message, { signal }) {
      const timing: RunTiming = { message, startedAt: performance.now() };
      runs.push(timing);
      await sleep(ms, signal);
      timing.endedAt = performance.now();
      return `${name} done: ${message}`;
    },
  });
  return Object.assign(agent, { runs });
}

/** Never answers and ignores its abort signal: only the runtime's timeout can end it. */
export function hangingAgent(name = 'stuck', timeoutMs?: number): Agent {
  return defineAgent({
    name,
    description: 'Never answers',
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    run: () => new Promise<string>(() => {}),
  });
}

/** How a {@link ScriptedOrchestrator} decides. */
export type DecisionHandler = (conversation: Conversation) => Decision | Promise<Decision>;

/** A copy of what an orchestrator saw for one decision (the runtime's array keeps growing). */
export interface SeenConversation extends Omit<Conversation, 'messages'> {
  messages: MessageItem[];
}

/** An orchestrator that decides with a function and records a snapshot of every conversation it saw. */
export class ScriptedOrchestrator extends AbstractOrchestrator {
  readonly seen: SeenConversation[] = [];
  readonly #handler: DecisionHandler;

  constructor(agents: readonly (Agent | AgentMeta)[], handler: DecisionHandler, name = 'scripted') {
    super({ name, agents: agents.map((agent) => agentMeta(agent as Agent)) });
    this.#handler = handler;
  }

  protected handleMessage(conversation: Conversation): Decision | Promise<Decision> {
    this.seen.push({ ...conversation, messages: [...conversation.messages] });
    return this.#handler(conversation);
  }
}

/** What the user sees for a set of agent replies: the contents, or an apology naming a failed agent. */
export function describeResults(results: readonly ToolMessage[]): string {
  return results
    .map((result) =>
      result.status === 'ok' ? result.content : `Sorry, the ${result.name} agent failed: ${result.content}`,
    )
    .join('\n');
}

/**
 * The usual two-hop turn: on the user's message, call the agent named by a
 * `name:` prefix (else `defaultAgent`) with the rest of the text; once it
 * replied, answer the user with its reply (or an apology when it failed).
 */
export function relay({ defaultAgent = 'echo' }: { defaultAgent?: string } = {}): DecisionHandler {
  return (conversation) => {
    const results = latestToolResults(conversation);
    if (results.length > 0) return routeToUser(describeResults(results), { reason: 'the agent answered' });
    const text = currentUserMessage(conversation).content;
    const match = /^([A-Za-z0-9_-]+):\s*(.*)$/s.exec(text);
    const named = match && conversation.agents.some((agent) => agent.name === match[1]);
    const agent = named ? match[1]! : defaultAgent;
    return toolCall(agent, named ? match[2]! : text, {
      thought: `The user wants the ${agent} agent`,
      reason: named ? 'named in the message' : 'default agent',
    });
  };
}

/** Calls every agent of `names` at once with the user's text, then answers with their replies in call order. */
export function fanOut(names: readonly string[]): DecisionHandler {
  return (conversation) => {
    const results = latestToolResults(conversation);
    if (results.length > 0) return routeToUser(describeResults(results));
    const text = currentUserMessage(conversation).content;
    return names.map((name) => toolCall(name, text, { reason: `${name} helps with part of it` }));
  };
}

/** Never answers the user: calls `agent` on every hop. */
export function loopForever(agent = 'echo'): DecisionHandler {
  return () => toolCall(agent, 'once more', { reason: 'still not satisfied' });
}

/** Options of {@link createApp}. */
export interface TestAppOptions extends Partial<Omit<AppOptions, 'agents'>> {
  agents: readonly Agent[];
  /** How the orchestrator decides (default: {@link relay}). */
  handler?: DecisionHandler;
}

/** An App and a {@link ScriptedOrchestrator} for its agents, not yet mounted. Errors are not logged unless `logger` is given. */
export function buildApp({
  agents,
  handler = relay(),
  name = 'test-app',
  logger = () => {},
  ...options
}: TestAppOptions) {
  const orchestrator = new ScriptedOrchestrator(agents, handler);
  const app = new App({ name, agents, logger, ...options });
  return { app, orchestrator };
}

/** An App with a {@link ScriptedOrchestrator} mounted (no port). */
export function createApp(options: TestAppOptions) {
  const { app, orchestrator } = buildApp(options);
  return { app: app.mount(orchestrator), orchestrator };
}

/** A `POST` with a JSON body (already serialised when `body` is a string). */
export function postJson(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  };
}

/** One Server-Sent Event: its `event:` name and parsed `data:`. */
export interface ReceivedEvent {
  event: string;
  data: TurnEvent;
  /** The `id:` line, when the event had one. */
  id?: string;
}

/** Parses a whole `text/event-stream` body. */
export function parseEventStream(text: string): ReceivedEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim().length > 0)
    .map((block) => {
      let event = 'message';
      let id: string | undefined;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice('event: '.length);
        else if (line.startsWith('data: ')) data.push(line.slice('data: '.length));
        else if (line.startsWith('id: ')) id = line.slice('id: '.length);
      }
      const received: ReceivedEvent = { event, data: JSON.parse(data.join('\n')) as TurnEvent };
      if (id !== undefined) received.id = id;
      return received;
    });
}

/** Reads a streamed chat response to its end and returns its events. */
export async function readEventStream(response: Response): Promise<ReceivedEvent[]> {
  return parseEventStream(await response.text());
}

/** Lines of a stack trace (`    at fn (file:line)`), which no response may contain. */
export const STACK_LINE = /\n\s+at /;

/**
 * Reads Server-Sent Events as they arrive until `until` says stop (given
 * the events so far), then leaves the rest unread: for cutting a stream.
 */
export async function readEventsUntil(
  response: Response,
  until: (events: readonly ReceivedEvent[]) => boolean,
): Promise<ReceivedEvent[]> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const complete = text.lastIndexOf('\n\n');
    const events = complete < 0 ? [] : parseEventStream(text.slice(0, complete + 2));
    if (until(events)) return events;
    const { value, done } = await reader.read();
    if (done) return parseEventStream(text);
    text += decoder.decode(value, { stream: true });
  }
}
