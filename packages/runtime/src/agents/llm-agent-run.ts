import type {
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { z } from 'zod';
import type { TokenUsage } from './llm-tracing.js';

/** Where a run stands: what a call that pauses for approval saves, to continue from it. */
export interface SavedRun {
  messages: ChatCompletionMessageParam[];
  /** How many conversation messages follow the system message (they give way to the budget first). */
  historyCount?: number;
  usage: TokenUsage;
  /** The text streamed so far. */
  content: string;
  /** Model calls made so far. */
  iterations: number;
  /** The model's tool calls that wait for approval. */
  toolCalls: ChatCompletionMessageFunctionToolCall[];
}

const SavedRunSchema = z.object({
  messages: z.array(z.looseObject({ role: z.string() })),
  historyCount: z.number().int().nonnegative().optional(),
  usage: z.object({ inputTokens: z.number(), outputTokens: z.number() }),
  content: z.string(),
  iterations: z.number().int().nonnegative(),
  toolCalls: z.array(
    z.looseObject({
      id: z.string(),
      type: z.literal('function'),
      function: z.object({ name: z.string(), arguments: z.string() }),
    }),
  ),
});

/** Checks a saved run read back from the store (it crossed a boundary); `undefined` when unreadable. */
export function readSavedRun(state: unknown): SavedRun | undefined {
  const saved = SavedRunSchema.safeParse(state);
  return saved.success ? (saved.data as SavedRun) : undefined;
}

/** What a run that ran out of model calls without writing any text answers: the tool results it got. */
export function partialAnswer(messages: readonly ChatCompletionMessageParam[], iterations: number): string {
  const names = new Map<string, string>();
  const results: string[] = [];
  for (const message of messages) {
    if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? []) {
        if (call.type === 'function') names.set(call.id, call.function.name);
      }
    } else if (message.role === 'tool') {
      const content = typeof message.content === 'string' ? message.content : JSON.stringify(message.content);
      results.push(`- ${names.get(message.tool_call_id) ?? 'tool'}: ${content}`);
    }
  }
  const stopped = `I stopped after ${iterations} model call${iterations === 1 ? '' : 's'} without a final answer.`;
  return results.length > 0 ? `${stopped} The tool results so far:\n${results.join('\n')}` : stopped;
}
