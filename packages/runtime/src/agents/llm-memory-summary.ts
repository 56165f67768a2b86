import type { Context } from '@opentelemetry/api';
import type { Memory } from '@switchboard/core';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { z } from 'zod';
import type { ChatClient } from './llm-client.js';
import type { HistoryItem } from './llm-memory-history.js';
import { callModel } from './llm-model-call.js';
import { estimateRequestTokens, estimateTokens, truncateToTokens } from './llm-token-estimate.js';
import type { TokenUsage } from './llm-tracing.js';

/** A running summary as kept in session memory (it crosses a boundary: parsed on read). */
const SummaryStateSchema = z.object({
  v: z.literal(1),
  summary: z.string(),
  /** The id of the newest message the summary covers. */
  coveredUpToMessageId: z.string(),
  /** How many messages it covers, over all its updates. */
  count: z.number().int().nonnegative(),
});

/** A running summary of the older part of a conversation. */
export type SummaryState = z.infer<typeof SummaryStateSchema>;

/** Reads the summary kept under `key`; `undefined` when there is none or memory is unavailable. */
export async function readSummary(
  memory: Memory | undefined,
  key: string,
): Promise<SummaryState | undefined> {
  const stored = await memory?.getContent(key);
  if (!stored?.success || stored.data === undefined) return undefined;
  const parsed = SummaryStateSchema.safeParse(stored.data);
  return parsed.success ? parsed.data : undefined;
}

/** Keeps the summary under `key`; a failed write only costs a larger update next time. */
export async function writeSummary(
  memory: Memory | undefined,
  key: string,
  state: SummaryState,
): Promise<void> {
  await memory?.setContent(key, state);
}

function summaryInstructions(maxTokens: number): string {
  return `You keep a running summary of a conversation between a user and an assistant; notes in brackets are replies of the assistant's helper agents.
Update the summary with the new messages. Keep what later answers may need: facts, names, numbers, decisions, the user's goals and preferences, open questions. Drop greetings and repetition.
Reply with the updated summary only, at most ${maxTokens} tokens (about ${Math.floor(maxTokens * 0.75)} words).`;
}

const NO_SUMMARY = '(none yet)';

function summaryRequest(
  instructions: string,
  previous: string,
  transcript: string,
): ChatCompletionMessageParam[] {
  return [
    { role: 'system', content: instructions },
    { role: 'user', content: `Summary so far:\n${previous || NO_SUMMARY}\n\nNew messages:\n${transcript}` },
  ];
}

const SEPARATOR = '\n\n';

/**
 * The smallest token budget that lets a summary request through: its
 * instructions, the previous summary at its largest and some room for messages.
 */
export function minimumSummaryBudget(maxTokens: number): number {
  const empty = summaryRequest(summaryInstructions(maxTokens), '', '');
  return estimateRequestTokens({ messages: empty }) + maxTokens + 64;
}

/** The transcript of one summary request and how many messages it holds. */
interface Chunk {
  transcript: string;
  size: number;
}

/**
 * Splits the new messages' lines into the transcripts of successive summary
 * requests, each within `budget` (the previous summary counted at its
 * largest); a line too long for one request is cut.
 */
function chunks(lines: readonly string[], instructions: string, maxTokens: number, budget?: number): Chunk[] {
  if (budget === undefined) return [{ transcript: lines.join(SEPARATOR), size: lines.length }];
  const room =
    budget - estimateRequestTokens({ messages: summaryRequest(instructions, '', '') }) - maxTokens - 1;
  const result: Chunk[] = [];
  let chunk: string[] = [];
  let used = 0;
  for (const whole of lines) {
    const line = truncateToTokens(whole, room - 1);
    const cost = estimateTokens(line) + 1;
    if (chunk.length > 0 && used + cost > room) {
      result.push({ transcript: chunk.join(SEPARATOR), size: chunk.length });
      chunk = [];
      used = 0;
    }
    chunk.push(line);
    used += cost;
  }
  if (chunk.length > 0) result.push({ transcript: chunk.join(SEPARATOR), size: chunk.length });
  return result;
}

/** What {@link updateSummary} needs. */
export interface SummaryUpdate {
  client: ChatClient;
  model: string;
  /** The summary so far, if any. */
  previous?: SummaryState;
  /** The messages to fold in, oldest first (never empty). */
  items: readonly HistoryItem[];
  maxTokens: number;
  /** Each summary request stays within it, when set. */
  tokenBudget?: number;
  signal: AbortSignal;
  parent: Context;
}

/** What {@link updateSummary} did. */
export interface SummaryOutcome {
  /** The updated summary, or the previous one when no call succeeded. */
  state?: SummaryState;
  usage: TokenUsage;
  calls: number;
}

/**
 * Folds new messages into a running summary: previous summary + new messages
 * → new summary, one generation (named `summary <model>`) per request, more
 * than one when the messages exceed the token budget. A failed call does not
 * fail the caller: the summary stays as the calls before it left it, and the
 * messages it missed are folded in next time (if still visible). Only
 * cancellation throws.
 */
export async function updateSummary({
  client,
  model,
  previous,
  items,
  maxTokens,
  tokenBudget,
  signal,
  parent,
}: SummaryUpdate): Promise<SummaryOutcome> {
  const instructions = summaryInstructions(maxTokens);
  const outcome: SummaryOutcome = { state: previous, usage: { inputTokens: 0, outputTokens: 0 }, calls: 0 };
  const lines = items.map((item) => item.line);
  let done = 0;
  for (const { transcript, size } of chunks(lines, instructions, maxTokens, tokenBudget)) {
    const chunkItems = items.slice(done, done + size);
    outcome.calls += 1;
    let text: string;
    try {
      const call = callModel({
        client,
        request: {
          model,
          messages: summaryRequest(instructions, outcome.state?.summary ?? '', transcript),
          max_completion_tokens: maxTokens,
        },
        stream: false,
        signal,
        parent,
        name: `summary ${model}`,
      });
      let next = await call.next();
      while (!next.done) next = await call.next();
      const turn = next.value;
      outcome.usage.inputTokens += turn.usage?.inputTokens ?? 0;
      outcome.usage.outputTokens += turn.usage?.outputTokens ?? 0;
      text = turn.content.trim();
    } catch (error) {
      if (signal.aborted) throw error;
      return outcome;
    }
    // An empty answer would erase what the summary held: keep the previous one and try again next time.
    if (text === '') return outcome;
    const last = chunkItems[chunkItems.length - 1];
    if (!last) return outcome;
    outcome.state = {
      v: 1,
      summary: truncateToTokens(text, maxTokens, ' …'),
      coveredUpToMessageId: last.id,
      count: (outcome.state?.count ?? 0) + chunkItems.length,
    };
    done += chunkItems.length;
  }
  return outcome;
}
