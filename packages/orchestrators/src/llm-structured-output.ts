import { context } from '@opentelemetry/api';
import { ConfigurationError, type Conversation, RequestContext, recordUsage } from '@switchboard/core';
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

/** A structured answer for one decision, or why there is none. */
export type DecisionAnswer<Value> = { ok: true; value: Value } | { ok: false; problem: string };

/**
 * {@link askForStructuredAnswer} on behalf of one decision: the tokens are
 * recorded on the decision (`recordUsage`), and a model that cannot be
 * reached or whose answers stay invalid becomes a `problem` for the caller's
 * fallback. A cancelled turn still throws, and so does a missing `openai`
 * package (`client` is resolved outside the fallback: it is a configuration
 * error).
 *
 * @example
 * ```ts
 * const asked = await askForDecision(conversation, { client: this.#client, model, messages, responseFormat, check, maxRetries: 1 });
 * if (!asked.ok) return this.fallbackDecision(conversation, asked.problem);
 * ```
 */
export async function askForDecision<Value>(
  conversation: Conversation,
  {
    client,
    ...options
  }: Omit<StructuredAnswerOptions<Value>, 'client'> & { client: () => Promise<ChatClient> },
): Promise<DecisionAnswer<Value>> {
  const resolved = await client();
  let answer: StructuredAnswer<Value>;
  try {
    answer = await askForStructuredAnswer({ ...options, client: resolved });
  } catch (error) {
    if (RequestContext.tryCurrent()?.signal.aborted) throw error;
    return {
      ok: false,
      problem: `the model could not be reached: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  recordUsage(conversation, answer.usage);
  if (answer.value !== undefined) return { ok: true, value: answer.value };
  const attempts = answer.retries + 1;
  return {
    ok: false,
    problem: `no valid answer after ${attempts} attempt${attempts > 1 ? 's' : ''}: ${answer.problems.at(-1) ?? 'no answer'}`,
  };
}

/** Checks that model-backed orchestrator options are whole numbers of at least their minimum. */
export function checkWholeNumbers(
  owner: string,
  options: ReadonlyArray<readonly [string, number, number]>,
): void {
  for (const [option, value, least] of options) {
    if (!Number.isInteger(value) || value < least) {
      throw new ConfigurationError({
        message: `${owner}: ${option} must be an integer of at least ${least}, got ${value}`,
      });
    }
  }
}
