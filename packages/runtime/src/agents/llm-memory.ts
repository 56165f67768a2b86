import { type Context, context as otelContext } from '@opentelemetry/api';
import { ConfigurationError, type Conversation, type Memory, RequestContext } from '@switchboard/core';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ChatClient } from './llm-client.js';
import { fitFixed, fitting } from './llm-memory-budget.js';
import { type HistoryItem, historyItems } from './llm-memory-history.js';
import {
  minimumSummaryBudget,
  readSummary,
  type SummaryState,
  updateSummary,
  writeSummary,
} from './llm-memory-summary.js';
import {
  estimateMessageTokens,
  estimateTokens,
  TOKEN_ESTIMATE,
  truncateToTokens,
} from './llm-token-estimate.js';
import type { TokenUsage } from './llm-tracing.js';

/**
 * What an LLM sees of the conversation:
 * - `'window'`: the last `window` messages, word for word; older ones are left out.
 * - `'summary'`: a running summary of every earlier turn, and the current
 *   turn word for word. The cheapest prompt; one summary update per call.
 * - `'hybrid'`: the whole conversation while it has at most `hybridThreshold`
 *   messages; past that, a summary of the older messages plus the last
 *   `hybridThreshold` (at most `window`) word for word.
 */
export type ConversationMemoryStrategy = 'window' | 'summary' | 'hybrid';

/** Options of {@link conversationMemory} (and of `llmAgent`'s `memory`). */
export interface ConversationMemoryOptions {
  strategy: ConversationMemoryStrategy;
  /** The most recent messages sent word for word by `'window'` (and at most by `'hybrid'`). Default 50. */
  window?: number;
  /** The longest summary, in estimated tokens; also its requests' `max_completion_tokens`. Default 500. */
  summaryMaxTokens?: number;
  /** `'hybrid'` sends a conversation of up to this many messages whole, then summary + this many. Default 20. */
  hybridThreshold?: number;
  /**
   * The most input tokens of any request, by {@link estimateTokens}'s
   * estimate (summary requests included). The oldest messages give way first;
   * with a summarising strategy they are folded into the summary instead.
   * The instructions and the task are always sent, cut with a note if they
   * alone exceed it. Default: no budget.
   */
  tokenBudget?: number;
  /** The model that writes summaries. Default: the agent's (or orchestrator's) model. */
  summaryModel?: string;
}

/** Where {@link conversationMemory} keeps its summary and how it reaches a model. */
export interface ConversationMemorySetup {
  /** Who uses it, for error messages, e.g. `llmAgent 'writer'`. */
  owner: string;
  /** The session-memory key of the summary: one per agent or orchestrator. */
  key: string;
  /** The model that writes summaries unless `summaryModel` is set. */
  model: string;
  /** The client summaries are requested through (or a function resolving it). */
  client: ChatClient | (() => Promise<ChatClient>);
  /** Tokens every request carries besides its messages (tool definitions, say), for the budget. */
  reservedTokens?: number;
}

/** One call's input to {@link ConversationMemory.messages}. */
export interface ConversationMemoryInput {
  conversation: Conversation;
  /** The system prompt; the summary, if any, is appended to it. */
  instructions: string;
  /** The last `user` message (an agent's task). Omit it when the conversation ends with what to answer. */
  task?: string;
  signal?: AbortSignal;
  /** The trace context summary generations nest under. Default: the active context. */
  parent?: Context;
  /** Where the summary is kept. Default: the current request's session memory. */
  memory?: Memory;
}

/** The opening messages of a model call, built by {@link ConversationMemory.messages}. */
export interface ConversationMemoryMessages {
  /** The system message (with the summary), the history, then the task if given. */
  messages: ChatCompletionMessageParam[];
  /** How many history messages follow the system message. */
  historyCount: number;
  /** The summary sent, if any. */
  summary?: string;
  /** Token usage of this call's summary updates. */
  usage: TokenUsage;
  /** How many summary requests this call made. */
  summaryCalls: number;
}

/** Builds what a model sees of a conversation; see {@link conversationMemory}. */
export interface ConversationMemory {
  readonly options: Readonly<Required<Omit<ConversationMemoryOptions, 'tokenBudget' | 'summaryModel'>>> &
    Pick<ConversationMemoryOptions, 'tokenBudget' | 'summaryModel'>;
  /** Updates the summary as needed and returns the opening messages of a model call. */
  messages(input: ConversationMemoryInput): Promise<ConversationMemoryMessages>;
}

const STRATEGIES: readonly ConversationMemoryStrategy[] = ['window', 'summary', 'hybrid'];
const SUMMARY_HEADER = '\n\nSummary of the earlier conversation (older messages are not shown):\n';

function checkOptions(owner: string, options: unknown): ConversationMemory['options'] {
  const given = (typeof options === 'string' ? { strategy: options } : options) as ConversationMemoryOptions;
  if (typeof given !== 'object' || given === null || !STRATEGIES.includes(given.strategy)) {
    throw new ConfigurationError({
      message: `${owner}: memory must be 'window', 'summary', 'hybrid' or { strategy, … }`,
    });
  }
  const {
    strategy,
    window = 50,
    summaryMaxTokens = 500,
    hybridThreshold = 20,
    tokenBudget,
    summaryModel,
  } = given;
  const counts = { window, summaryMaxTokens, hybridThreshold, tokenBudget: tokenBudget ?? 1 };
  for (const [field, value] of Object.entries(counts)) {
    if (!Number.isInteger(value) || value < 1)
      throw new ConfigurationError({
        message: `${owner}: memory.${field} must be a positive integer, got ${value}`,
      });
  }
  if (summaryModel !== undefined && (typeof summaryModel !== 'string' || summaryModel === ''))
    throw new ConfigurationError({ message: `${owner}: memory.summaryModel must be a model name` });
  return { strategy, window, summaryMaxTokens, hybridThreshold, tokenBudget, summaryModel };
}

/** The first history item sent word for word, by the strategy alone. */
function tailStart(items: readonly HistoryItem[], options: ConversationMemory['options']): number {
  const { strategy, window, hybridThreshold } = options;
  const turnStart = items.findIndex((item) => item.current);
  const current = turnStart === -1 ? items.length : turnStart;
  // Like the routers, never cut into the current turn (only the budget may).
  if (strategy === 'summary') return current;
  if (strategy === 'hybrid' && items.length <= hybridThreshold) return 0;
  const size = strategy === 'window' ? window : Math.min(window, hybridThreshold);
  return Math.min(current, Math.max(0, items.length - size));
}

function sessionMemory(): Memory | undefined {
  try {
    return RequestContext.tryCurrent()?.getMemory('session');
  } catch {
    return undefined;
  }
}

/**
 * Gives an LLM component the conversation: the last messages word for word,
 * a running summary of the older ones, or both (see
 * {@link ConversationMemoryStrategy}), within an optional token budget
 * measured by {@link estimateTokens}. `llmAgent`'s `memory` option is built
 * on it; an orchestrator can use it for its own model calls.
 *
 * The summary is incremental: it is kept in session memory under `key` as
 * the summary text, the id of the newest message it covers and a count, and
 * each call sends the summary model only the previous summary and the
 * messages that left the window since — never the whole history. Each
 * summary request is a generation span (`summary <model>`). Messages that
 * leave the app's `historyWindow` (50 by default) before the next call are
 * not seen again, so keep this window below it (the defaults do).
 *
 * @example
 * ```ts
 * const memory = conversationMemory(
 *   { strategy: 'hybrid', tokenBudget: 4_000 },
 *   { owner: "router 'main'", key: 'router:main:summary', model: 'gpt-4o-mini', client },
 * );
 * const { messages } = await memory.messages({ conversation, instructions: 'You route requests.' });
 * ```
 */
export function conversationMemory(
  options: ConversationMemoryStrategy | ConversationMemoryOptions,
  { owner, key, model, client, reservedTokens = 0 }: ConversationMemorySetup,
): ConversationMemory {
  const checked = checkOptions(owner, options);
  const { strategy, summaryMaxTokens, tokenBudget, summaryModel = model } = checked;
  const summarising = strategy !== 'window';
  if (tokenBudget !== undefined) {
    const minimum = Math.max(reservedTokens + 64, summarising ? minimumSummaryBudget(summaryMaxTokens) : 0);
    if (tokenBudget < minimum) {
      throw new ConfigurationError({
        message: `${owner}: memory.tokenBudget ${tokenBudget} is too small; it needs at least ${minimum}${summarising ? ` with summaryMaxTokens ${summaryMaxTokens}` : ''}`,
      });
    }
  }
  const getClient = typeof client === 'function' ? client : () => Promise.resolve(client);
  const fullReserve = estimateTokens(SUMMARY_HEADER) + summaryMaxTokens;

  async function messages({
    conversation,
    instructions,
    task,
    signal = new AbortController().signal,
    parent = otelContext.active(),
    memory = sessionMemory(),
  }: ConversationMemoryInput): Promise<ConversationMemoryMessages> {
    const usage: TokenUsage = { inputTokens: 0, outputTokens: 0 };
    const items = historyItems(conversation, task);
    let state: SummaryState | undefined = summarising ? await readSummary(memory, key) : undefined;
    // Messages up to the one the summary reaches are in it; none of those visible, when it reaches further back.
    const covered = state
      ? conversation.messages.findIndex((message) => message.id === state?.coveredUpToMessageId)
      : -1;
    const open = (item: HistoryItem) => item.index > covered;
    const start = tailStart(items, checked);
    const older = items.slice(0, start).filter(open);
    const tail = items.slice(start).filter(open);

    let system = instructions;
    let finalTask = task;
    let kept = tail.length;
    let allowance = fullReserve;
    if (tokenBudget !== undefined) {
      const overhead = TOKEN_ESTIMATE.tokensPerRequest + reservedTokens;
      const messageCount = task === undefined ? 1 : 2;
      [system, finalTask] = fitFixed(
        instructions,
        task,
        tokenBudget - overhead - messageCount * TOKEN_ESTIMATE.tokensPerMessage,
      );
      const fixed =
        overhead +
        estimateMessageTokens({ role: 'system', content: system }) +
        (finalTask === undefined ? 0 : estimateMessageTokens({ role: 'user', content: finalTask }));
      allowance = Math.max(0, Math.min(fullReserve, tokenBudget - fixed));
      const withSummary = summarising && (state !== undefined || older.length > 0);
      kept = fitting(tail, tokenBudget - fixed - (withSummary ? allowance : 0));
      // The budget pushed messages out of the window: they go to the summary, which needs its room.
      if (summarising && !withSummary && kept < tail.length)
        kept = fitting(tail, tokenBudget - fixed - allowance);
    }
    const fresh = summarising ? [...older, ...tail.slice(0, tail.length - kept)] : [];
    const history = tail.slice(tail.length - kept);

    let summaryCalls = 0;
    if (fresh.length > 0) {
      const outcome = await updateSummary({
        client: await getClient(),
        model: summaryModel,
        previous: state,
        items: fresh,
        maxTokens: summaryMaxTokens,
        tokenBudget,
        signal,
        parent,
      });
      usage.inputTokens += outcome.usage.inputTokens;
      usage.outputTokens += outcome.usage.outputTokens;
      summaryCalls = outcome.calls;
      if (outcome.state && outcome.state !== state) {
        state = outcome.state;
        await writeSummary(memory, key, state);
      }
    }

    const room = allowance - estimateTokens(SUMMARY_HEADER);
    const summary = state?.summary && room > 0 ? truncateToTokens(state.summary, room, ' …') : undefined;
    const result: ConversationMemoryMessages = {
      messages: [
        { role: 'system', content: summary ? `${system}${SUMMARY_HEADER}${summary}` : system },
        ...history.map((item) => item.chat),
      ],
      historyCount: history.length,
      usage,
      summaryCalls,
    };
    if (finalTask !== undefined) result.messages.push({ role: 'user', content: finalTask });
    if (summary) result.summary = summary;
    return result;
  }

  return { options: checked, messages };
}
