import { context } from '@opentelemetry/api';
import type { TokenUsage } from '@switchboard/core';
import { type ChatClient, clientResolver, type LlmClientOptions } from '../agents/llm-client.js';
import { endGeneration, startGeneration } from '../agents/llm-tracing.js';
import { chargeModelCall } from '../budgets/turn-budget.js';
import { isPromiseLike } from '../promise-like.js';
import type { RetrievalItem } from './retrieval-bundle.js';

/** A model that writes the bundle's summary from the retrieved items. */
export interface RetrievalSummaryOptions extends LlmClientOptions {
  model: string;
  /** Replaces the default instructions (summarise the passages for the query, citing sources, adding nothing). */
  instructions?: string;
  temperature?: number;
}

const DEFAULT_INSTRUCTIONS =
  'Summarise what the numbered passages say about the query in a few sentences, citing passages as [n]. ' +
  'Use only what the passages say; if they do not answer the query, say so.';

/** Writes summaries with a model: one chat completion per search, a generation span under the active span. */
export function modelSummarizer(
  owner: string,
  { model, instructions = DEFAULT_INSTRUCTIONS, temperature, ...client }: RetrievalSummaryOptions,
): (
  query: string,
  items: readonly RetrievalItem[],
  signal: AbortSignal,
) => Promise<{ text: string; usage?: TokenUsage }> {
  const getClient: () => Promise<ChatClient> = clientResolver(`${owner} summary`, client);
  return async (query, items, signal) => {
    const passages = items.map((item, index) => `[${index + 1}] (${item.source}) ${item.text}`).join('\n');
    const messages = [
      { role: 'system' as const, content: instructions },
      { role: 'user' as const, content: `Query: ${query}\n\nPassages:\n${passages}` },
    ];
    const charge = chargeModelCall({ model, messages });
    const ticket = isPromiseLike(charge) ? await charge : charge;
    const span = startGeneration({ parent: context.active(), model, input: messages, temperature });
    try {
      const request = { model, messages, stream: false as const };
      const completion = await (await getClient()).chat.completions.create(
        temperature === undefined ? request : { ...request, temperature },
        { signal },
      );
      const text = completion.choices[0]?.message?.content?.trim() ?? '';
      const usage = completion.usage && {
        inputTokens: completion.usage.prompt_tokens,
        outputTokens: completion.usage.completion_tokens,
      };
      ticket?.settle(usage);
      endGeneration(span, { output: text, usage, responseModel: completion.model });
      return { text, usage };
    } catch (error) {
      ticket?.settle(undefined);
      endGeneration(span, { error });
      throw error;
    }
  };
}
