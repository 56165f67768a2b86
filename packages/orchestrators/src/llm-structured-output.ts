import { context } from '@opentelemetry/api';
import {
  ConfigurationError,
  type Conversation,
  RequestContext,
  recordUsage,
  type TokenUsage,
} from '@switchboard/core';
import { type ChatClient, chargeModelCall } from '@switchboard/runtime';
import { endGeneration, startGeneration } from '@switchboard/runtime/internal';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ResponseFormatJSONSchema } from 'openai/resources/shared';
import type { z } from 'zod';
import { JsonFieldStream } from './json-field-stream.js';

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
  /**
   * Streams one top-level string field of the answer as the model writes it
   * (the request is then streamed): `onText` gets its decoded text piece by
   * piece once `when` (given the fields written before it) allows;
   * `onDiscard` is called when streamed text turned out to belong to an
   * invalid answer that is asked again, or the call failed.
   */
  streamField?: StreamedField;
}

/** One string field of a structured answer, streamed as it is written (see `StructuredAnswerOptions.streamField`). */
export interface StreamedField {
  name: string;
  when?(before: Record<string, unknown>): boolean;
  onText(text: string): void;
  onDiscard(): void;
}

/** What one model call answered. */
interface Completion {
  content: string;
  refusal?: string | null;
  usage?: TokenUsage;
  responseModel?: string;
  finishReason?: string | null;
}

/** One model call, whole or streamed (the field's text goes out as it arrives); `streamed` says whether any did. */
async function complete(
  client: ChatClient,
  request: Parameters<ChatClient['chat']['completions']['create']>[0] & { stream?: false },
  signal: AbortSignal | undefined,
  field: StreamedField | undefined,
  sent: { any: boolean },
): Promise<Completion> {
  const options = signal ? { signal } : undefined;
  if (!field) {
    const completion = await client.chat.completions.create({ ...request, stream: false }, options);
    const message = completion.choices[0]?.message;
    return {
      content: message?.content ?? '',
      refusal: message?.refusal,
      usage: completion.usage && {
        inputTokens: completion.usage.prompt_tokens,
        outputTokens: completion.usage.completion_tokens,
      },
      responseModel: completion.model,
      finishReason: completion.choices[0]?.finish_reason,
    };
  }
  const stream = await client.chat.completions.create(
    { ...request, stream: true, stream_options: { include_usage: true } },
    options,
  );
  const reader = new JsonFieldStream(field.name, field.when);
  const result: Completion = { content: '' };
  try {
    for await (const chunk of stream) {
      result.responseModel ??= chunk.model;
      if (chunk.usage)
        result.usage = {
          inputTokens: chunk.usage.prompt_tokens,
          outputTokens: chunk.usage.completion_tokens,
        };
      const choice = chunk.choices[0];
      if (!choice) continue;
      if (choice.delta.refusal) result.refusal = (result.refusal ?? '') + choice.delta.refusal;
      const piece = choice.delta.content;
      if (piece) {
        result.content += piece;
        const text = reader.push(piece);
        if (text) {
          sent.any = true;
          field.onText(text);
        }
      }
      if (choice.finish_reason) result.finishReason = choice.finish_reason;
    }
  } finally {
    stream.controller.abort();
  }
  return result;
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
  streamField,
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
    // The turn's budgets, if any: a call that could pass one is never sent (it throws, and the turn ends).
    const charge = chargeModelCall({ model, messages: conversation });
    const ticket = charge && (await charge);
    const span = startGeneration({ parent: context.active(), model, input: conversation, temperature });
    span.setAttribute('switchboard.attempt', attempt);
    let content: string;
    const sent = { any: false };
    try {
      const request = { model, messages: conversation, response_format: responseFormat };
      const completion = await complete(
        client,
        temperature === undefined ? request : { ...request, temperature },
        signal,
        streamField,
        sent,
      );
      const { usage } = completion;
      ticket?.settle(usage);
      if (usage) {
        result.usage.inputTokens += usage.inputTokens;
        result.usage.outputTokens += usage.outputTokens;
      }
      content = completion.content;
      endGeneration(span, {
        output: content || (completion.refusal ?? ''),
        usage,
        responseModel: completion.responseModel,
        finishReason: completion.finishReason ?? undefined,
      });
      if (!content && completion.refusal) {
        result.problems.push(`The model refused: ${completion.refusal}`);
        conversation.push({ role: 'assistant', content: completion.refusal });
        conversation.push({ role: 'user', content: 'Answer with the JSON object the schema asks for.' });
        continue;
      }
    } catch (error) {
      ticket?.settle(undefined);
      endGeneration(span, { error });
      if (sent.any) streamField?.onDiscard();
      throw error;
    }
    const checked = check(content);
    if (checked.ok) return { ...result, value: checked.value };
    if (sent.any) streamField?.onDiscard();
    result.problems.push(checked.feedback);
    conversation.push({ role: 'assistant', content }, { role: 'user', content: checked.feedback });
  }
  return result;
}

/**
 * A check of a model's JSON answer against a zod schema, with feedback that
 * tells the model what to fix.
 * @example
 * ```ts
 * const check = jsonAnswerCheck(z.object({ answer: z.string() }));
 * check('{"answer":"Paris"}'); // { ok: true, value: { answer: 'Paris' } }
 * ```
 */
export function jsonAnswerCheck<Value>(schema: z.ZodType<Value>): (content: string) => AnswerCheck<Value> {
  return (content) => {
    const json = parseJson(content);
    if (!json.ok)
      return {
        ok: false,
        feedback: `Your answer was not valid JSON (${json.error}). Answer with the JSON object only.`,
      };
    const parsed = schema.safeParse(json.value);
    if (!parsed.success) {
      const issues = parsed.error.issues.map(
        (issue) => `${issue.path.join('.') || 'answer'}: ${issue.message}`,
      );
      return { ok: false, feedback: `Your answer did not fit the schema: ${issues.join('; ')}. Try again.` };
    }
    return { ok: true, value: parsed.data };
  };
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
