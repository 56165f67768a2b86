import { context } from '@opentelemetry/api';
import { RequestContext } from '@switchboard/core';
import { type ChatClient, endGeneration, startGeneration, type TokenUsage } from '@switchboard/runtime';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ResponseFormatJSONSchema } from 'openai/resources/shared';

/** The verdict on one model answer: a value, or feedback telling the model what to fix. */
export type AnswerCheck<Value> = { ok: true; value: Value } | { ok: false; feedback: string };

/** Options of {@link askForStructuredAnswer}. */
export interface StructuredAnswerOptions<Value> {
  client: ChatClient;
  model: string;
  temperature?: number;
  messages: readonly ChatCompletionMessageParam[];
  responseFormat: ResponseFormatJSONSchema;
  /** Parses and validates the answer text. */
  check(content: string): AnswerCheck<Value>;
  /** Further attempts after an invalid answer, each with the feedback appended. */
  maxRetries: number;
}

/** What {@link askForStructuredAnswer} obtained. */
export interface StructuredAnswer<Value> {
  /** The valid answer, or `undefined` when every attempt failed. */
  value?: Value;
  /** How many attempts were made after the first. */
  retries: number;
  /** The feedback of each invalid answer, in order. */
  problems: string[];
  /** Summed over every attempt. */
  usage: TokenUsage;
}

/**
 * Parses JSON without throwing.
 * @example
 * ```ts
 * const parsed = parseJson('{"a":1}'); // { ok: true, value: { a: 1 } }
 * ```
 */
export function parseJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Asks the model for a schema-constrained JSON answer; an answer that fails
 * `check` is retried up to `maxRetries` times with the model's answer and the
 * feedback appended to the conversation. Each call is a Langfuse generation
 * span (model, usage) under the active span, cancelled with the request's
 * signal. API errors (after the client's own retries) are thrown.
 *
 * @example
 * ```ts
 * const answer = await askForStructuredAnswer({ client, model, messages, responseFormat, maxRetries: 1, check });
 * if (answer.value === undefined) console.log(answer.problems);
 * ```
 */
export async function askForStructuredAnswer<Value>({
  client,
  model,
  temperature,
  messages,
  responseFormat,
  check,
  maxRetries,
}: StructuredAnswerOptions<Value>): Promise<StructuredAnswer<Value>> {
  const signal = RequestContext.tryCurrent()?.signal;
  const conversation = [...messages];
  const result: StructuredAnswer<Value> = {
    retries: 0,
    problems: [],
    usage: { inputTokens: 0, outputTokens: 0 },
  };
  for (let attempt = 0; attempt <= maxRetries; attempt++) {
    result.retries = attempt;
    const span = startGeneration({ parent: context.active(), model, input: conversation, temperature });
    span.setAttribute('switchboard.attempt', attempt);
    let content: string;
    try {
      const request = {
        model,
        messages: conversation,
        response_format: responseFormat,
        stream: false as const,
      };
      const completion = await client.chat.completions.create(
        temperature === undefined ? request : { ...request, temperature },
        signal ? { signal } : undefined,
      );
      const usage = completion.usage
        ? { inputTokens: completion.usage.prompt_tokens, outputTokens: completion.usage.completion_tokens }
        : undefined;
      if (usage) {
        result.usage.inputTokens += usage.inputTokens;
        result.usage.outputTokens += usage.outputTokens;
      }
      const message = completion.choices[0]?.message;
      content = message?.content ?? '';
      endGeneration(span, {
        output: content || (message?.refusal ?? ''),
        usage,
        responseModel: completion.model,
        finishReason: completion.choices[0]?.finish_reason,
      });
      if (!content && message?.refusal) {
        result.problems.push(`The model refused: ${message.refusal}`);
        conversation.push({ role: 'assistant', content: message.refusal });
        conversation.push({ role: 'user', content: 'Answer with the JSON object the schema asks for.' });
        continue;
      }
    } catch (error) {
      endGeneration(span, { error });
      throw error;
    }
    const checked = check(content);
    if (checked.ok) return { ...result, value: checked.value };
    result.problems.push(checked.feedback);
    conversation.push({ role: 'assistant', content }, { role: 'user', content: checked.feedback });
  }
  return result;
}
