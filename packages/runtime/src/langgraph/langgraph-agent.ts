import { AIMessage, AIMessageChunk, HumanMessage } from '@langchain/core/messages';
import { Command } from '@langchain/langgraph';
import { ConfigurationError } from '@switchboard/core';
import { type Agent, type AgentContext, defineAgent } from '../agents/agent.js';
import { AgentPause } from '../agents/agent-pause.js';
import { SwitchboardCheckpointSaver } from './checkpoint-saver.js';
import {
  approvalAnswerOf,
  approvalRequestOf,
  defaultInterruptKind,
  type LangGraphInterrupt,
  type LangGraphInterruptKind,
  questionsOf,
} from './langgraph-interrupts.js';

/**
 * What {@link langGraphAgent} needs of a compiled LangGraph.js graph
 * (`StateGraph#compile()` returns one): `stream`, `getState` and its checkpointer.
 */
export interface HostedLangGraph {
  // biome-ignore lint/suspicious/noExplicitAny: LangGraph's own input and option types are generic per graph.
  stream(input: any, options?: any): Promise<AsyncIterable<unknown>>;
  // biome-ignore lint/suspicious/noExplicitAny: as above.
  getState(config: any): Promise<{
    values?: unknown;
    tasks: readonly { interrupts?: readonly LangGraphInterrupt[] }[];
  }>;
  /** Set by `compile({ checkpointer })`. */
  checkpointer?: unknown;
}

/** Options of {@link langGraphAgent}. */
export interface LangGraphAgentOptions {
  name: string;
  description: string;
  /** A compiled graph, compiled with a checkpointer (a `SwitchboardCheckpointSaver` to survive replicas). */
  graph: HostedLangGraph;
  keywords?: string[];
  capabilities?: string[];
  /** Overrides the app's per-agent timeout. */
  timeoutMs?: number;
  /** The graph's input for a message (default `{ messages: [new HumanMessage(message)] }`). */
  input?: (message: string, context: AgentContext) => unknown;
  /** Which interrupts ask for approval and which for input (default {@link defaultInterruptKind}). */
  interruptKind?: (value: unknown) => LangGraphInterruptKind;
  /** LangGraph's limit on supersteps per run (default LangGraph's, 25). */
  recursionLimit?: number;
}

/** Kept on the stored reply that asked the user for input: the next call reads the thread for the question. */
const ASKED = 'langgraphAskedInput';

/** What a paused call keeps with the turn: the text already streamed, so that the reply stays whole. */
interface PausedRun {
  text: string;
}

/** The text of the AI messages after the last human message of a state's `messages`, joined as streamed. */
function replyOf(values: unknown): string {
  const messages = (values as { messages?: unknown } | undefined)?.messages;
  if (!Array.isArray(messages)) return '';
  const lastHuman = messages.findLastIndex((message) => HumanMessage.isInstance(message));
  return messages
    .slice(lastHuman + 1)
    .map(textOf)
    .filter((text) => text !== '')
    .join('\n\n');
}

function textOf(message: unknown): string {
  if (!AIMessage.isInstance(message) && !AIMessageChunk.isInstance(message)) return '';
  return typeof message.content === 'string' ? message.content : message.text;
}

/**
 * Hosts a compiled LangGraph.js graph as a Switchboard agent. Each call runs
 * the graph on the thread of the session (thread id = session id; with a
 * {@link SwitchboardCheckpointSaver} threads are also scoped by tenant, with
 * another checkpointer the thread id is `tenant:session`, the tenant URI-encoded), the call's
 * message as a human message. The AI messages the run produces are streamed
 * as `agent-delta` events and, joined by blank lines, are the reply.
 *
 * A node's `interrupt(value)` becomes, by `interruptKind`:
 * - an approval (default): the turn pauses in `awaiting_approval` with one
 *   approval per interrupt (`value` a string, or `{ action, message, risk,
 *   reason }`); once decided, on whichever replica, the graph resumes with
 *   `new Command({ resume })` and `interrupt()` returns a
 *   {@link LangGraphApprovalAnswer} (`{ approved, status, comment? }`). The
 *   resumed call streams the text of before the pause again first, so that
 *   its reply is whole;
 * - an input request (`{ question }`): the reply is the question, and the
 *   next message this agent gets in the session resumes the graph as
 *   `interrupt()`'s return value.
 *
 * A new message for a thread paused on an approval (the approval was
 * withdrawn) starts a new run: LangGraph drops the pending interrupt.
 *
 * @example
 * ```ts
 * const checkpointer = new SwitchboardCheckpointSaver({ backend: redisCheckpointBackend(redis) });
 * const graph = new StateGraph(MessagesAnnotation).addNode('answer', answer)
 *   .addEdge(START, 'answer').compile({ checkpointer });
 * const agent = langGraphAgent({ name: 'refunds', description: 'Refunds orders', keywords: ['refund'], graph });
 * ```
 */
export function langGraphAgent({
  graph,
  input = (message) => ({ messages: [new HumanMessage(message)] }),
  interruptKind = defaultInterruptKind,
  recursionLimit,
  ...meta
}: LangGraphAgentOptions): Agent {
  if (typeof graph?.stream !== 'function' || typeof graph.getState !== 'function') {
    throw new ConfigurationError({
      message: `Agent '${meta.name}': graph must be a compiled LangGraph graph`,
    });
  }
  if (!graph.checkpointer) {
    throw new ConfigurationError({
      message: `Agent '${meta.name}': compile the graph with a checkpointer (e.g. new SwitchboardCheckpointSaver(…)), so that its thread survives the turn`,
    });
  }
  const tenantScoped = SwitchboardCheckpointSaver.isInstance(graph.checkpointer);

  const configOf = ({ request, signal }: AgentContext) => {
    const { sessionId, tenantId } = request;
    const threadId =
      tenantScoped || tenantId === undefined ? sessionId : `${encodeURIComponent(tenantId)}:${sessionId}`;
    return {
      configurable: { thread_id: threadId },
      signal,
      streamMode: ['messages', 'updates'],
      ...(recursionLimit === undefined ? {} : { recursionLimit }),
    };
  };

  /** True when this agent's latest reply in the conversation asked the user for input. */
  const askedLastTime = ({ conversation }: AgentContext): boolean => {
    const { messages } = conversation;
    for (let index = messages.length - 1; index >= 0; index -= 1) {
      const message = messages[index]!;
      if (message.role === 'tool' && message.name === meta.name) return message.metadata?.[ASKED] === true;
    }
    return false;
  };

  /** A fresh call: the answer to a pending input request, or a new input. */
  const startOf = async (message: string, context: AgentContext, config: object): Promise<unknown> => {
    // Only a call after a question reads the thread first: other calls cost no extra checkpoint read.
    if (!askedLastTime(context)) return input(message, context);
    const { tasks } = await graph.getState(config);
    const asked = tasks
      .flatMap((task) => task.interrupts ?? [])
      .filter((pending) => pending.id !== undefined);
    if (asked.length > 0 && asked.every((pending) => interruptKind(pending.value) === 'input')) {
      return new Command({ resume: Object.fromEntries(asked.map((pending) => [pending.id, message])) });
    }
    return input(message, context);
  };

  async function* run(
    message: string,
    context: AgentContext,
  ): AsyncGenerator<string, { metadata: Record<string, unknown> } | undefined> {
    const config = configOf(context);
    let text = '';
    let start: unknown;
    if (context.resume) {
      text = (context.resume.state as PausedRun | null)?.text ?? '';
      if (text !== '') yield text;
      const answers = context.resume.decisions.map((decision) => [decision.id, approvalAnswerOf(decision)]);
      start = new Command({ resume: Object.fromEntries(answers) });
    } else {
      start = await startOf(message, context, config);
    }
    const interrupts: LangGraphInterrupt[] = [];
    let lastMessageId: string | undefined;
    for await (const [mode, chunk] of (await graph.stream(start, config)) as AsyncIterable<
      [string, unknown]
    >) {
      if (mode === 'messages') {
        const [streamed] = chunk as [{ id?: string }];
        const delta = textOf(streamed);
        if (delta === '') continue;
        const separator = text !== '' && streamed.id !== lastMessageId ? '\n\n' : '';
        lastMessageId = streamed.id;
        text += separator + delta;
        yield separator + delta;
      } else {
        const raised = (chunk as { __interrupt__?: LangGraphInterrupt[] }).__interrupt__;
        if (raised) interrupts.push(...raised);
      }
    }
    if (interrupts.length === 0) {
      if (context.resume && lastMessageId === undefined) {
        // Run again after a crash (at least once): the thread had finished, so nothing ran; answer from its state.
        const whole = replyOf((await graph.getState(config)).values);
        if (whole.startsWith(text) && whole.length > text.length) yield whole.slice(text.length);
      }
      return undefined;
    }
    const approvals = interrupts.filter(({ value }) => interruptKind(value) === 'approval');
    if (approvals.length > 0) {
      const paused: PausedRun = { text };
      throw new AgentPause({ requests: approvals.map(approvalRequestOf), state: paused });
    }
    yield (text === '' ? '' : '\n\n') + questionsOf(interrupts);
    return { metadata: { [ASKED]: true } };
  }

  return defineAgent({ ...meta, run });
}
