import type { Context } from '@opentelemetry/api';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsBase,
  ChatCompletionMessageFunctionToolCall,
} from 'openai/resources/chat/completions';
import { chargeModelCall, type ModelCallTicket } from '../budgets/turn-budget.js';
import { isPromiseLike } from '../promise-like.js';
import type { ChatClient } from './llm-client.js';
import { endGeneration, startGeneration, type TokenUsage } from './llm-tracing.js';

/** What one model call produced. */
export interface ModelTurn {
  content: string;
  toolCalls: ChatCompletionMessageFunctionToolCall[];
  usage?: TokenUsage;
  finishReason?: string;
  /** The model that answered, as the server reports it. */
  responseModel?: string;
}

/** The request of one model call, without `stream`. */
export type ModelRequest = Omit<ChatCompletionCreateParamsBase, 'stream' | 'stream_options'>;

/** Everything {@link callModel} needs. */
export interface ModelCallOptions {
  client: ChatClient;
  request: ModelRequest;
  stream: boolean;
  signal: AbortSignal;
  /** The trace context the generation span nests under. */
  parent: Context;
  /** Yielded before the first text delta, if the model writes any (separates successive answers). */
  prefix?: string;
  /** The generation span's name. Default `chat <model>`. */
  name?: string;
}

function toUsage(
  usage: { prompt_tokens: number; completion_tokens: number } | null | undefined,
): TokenUsage | undefined {
  return usage ? { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens } : undefined;
}

/** Rebuilds tool calls from their streamed deltas (id and name first, then argument pieces). */
class ToolCallAccumulator {
  readonly #calls: ChatCompletionMessageFunctionToolCall[] = [];

  add(deltas: readonly ChatCompletionChunk.Choice.Delta.ToolCall[]): void {
    for (const delta of deltas) {
      let call = this.#calls[delta.index];
      if (!call) {
        call = { id: '', type: 'function', function: { name: '', arguments: '' } };
        this.#calls[delta.index] = call;
      }
      if (delta.id) call.id = delta.id;
      if (delta.function?.name) call.function.name += delta.function.name;
      if (delta.function?.arguments) call.function.arguments += delta.function.arguments;
    }
  }

  get calls(): ChatCompletionMessageFunctionToolCall[] {
    return this.#calls.filter((call) => call !== undefined);
  }
}

/**
 * Resolves in the event loop's next turn. A model's deltas often come in one
 * read: relayed in one go, the first would leave only with the last (a
 * response's writes of one tick go out together). Waiting once, after the
 * first delta, lets it reach the client first. Measured by the stream-relay
 * bench (bench/streaming-relay.ts, 200 deltas in one read, a loaded 2-core
 * machine): the least time a relay added to the first delta went from ~9 ms
 * to ~4 ms; a bare Hono relay, which writes as it parses, adds ~7 ms.
 */
function afterThisTick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

async function* streamed({
  client,
  request,
  signal,
  prefix = '',
}: ModelCallOptions): AsyncGenerator<string, ModelTurn> {
  const stream = await client.chat.completions.create(
    { ...request, stream: true, stream_options: { include_usage: true } },
    { signal },
  );
  const toolCalls = new ToolCallAccumulator();
  const turn: ModelTurn = { content: '', toolCalls: [] };
  try {
    for await (const chunk of stream) {
      turn.responseModel ??= chunk.model;
      if (chunk.usage) turn.usage = toUsage(chunk.usage);
      const choice = chunk.choices[0];
      if (!choice) continue;
      const text = choice.delta.content ?? choice.delta.refusal;
      if (text) {
        const first = turn.content === '';
        if (first && prefix) yield prefix;
        turn.content += text;
        yield text;
        if (first) await afterThisTick();
      }
      if (choice.delta.tool_calls) toolCalls.add(choice.delta.tool_calls);
      if (choice.finish_reason) turn.finishReason = choice.finish_reason;
    }
  } finally {
    // Stops reading the response when the consumer stops early.
    stream.controller.abort();
  }
  turn.toolCalls = toolCalls.calls;
  return turn;
}

async function* whole({
  client,
  request,
  signal,
  prefix = '',
}: ModelCallOptions): AsyncGenerator<string, ModelTurn> {
  const completion = await client.chat.completions.create({ ...request, stream: false }, { signal });
  const choice = completion.choices[0];
  const content = choice?.message.content ?? choice?.message.refusal ?? '';
  if (content) yield prefix + content;
  return {
    content,
    toolCalls: (choice?.message.tool_calls ?? []).filter((call) => call.type === 'function'),
    usage: toUsage(completion.usage),
    finishReason: choice?.finish_reason,
    responseModel: completion.model,
  };
}

/**
 * Makes one chat-completions call inside a generation span, yielding the
 * text as it arrives (the whole text at once when not streaming) and
 * returning the text, tool calls and usage.
 *
 * @example
 * ```ts
 * const turn = yield* callModel({ client, request: { model, messages }, stream: true, signal, parent });
 * ```
 */
export async function* callModel(options: ModelCallOptions): AsyncGenerator<string, ModelTurn> {
  const { request, parent, name } = options;
  // The turn's budgets, if any, first: a call that could pass one is never sent (and has no span).
  const charge = chargeModelCall({
    model: request.model,
    messages: request.messages,
    tools: request.tools,
    maxOutputTokens: request.max_completion_tokens ?? request.max_tokens,
  });
  const ticket: ModelCallTicket | undefined = isPromiseLike(charge) ? await charge : charge;
  const span = startGeneration({
    parent,
    model: request.model,
    name,
    input: request.messages,
    temperature: request.temperature ?? undefined,
  });
  let turn: ModelTurn | undefined;
  let failure: { error: unknown } | undefined;
  try {
    turn = yield* options.stream ? streamed(options) : whole(options);
    return turn;
  } catch (error) {
    failure = { error };
    throw error;
  } finally {
    ticket?.settle(turn?.usage);
    // Neither set: the consumer stopped reading early (cancelled).
    if (turn) {
      const { content, toolCalls, usage, finishReason, responseModel } = turn;
      const output = {
        role: 'assistant',
        content: content || null,
        tool_calls: toolCalls.length ? toolCalls : undefined,
      };
      endGeneration(span, { output, usage, finishReason, responseModel });
    } else {
      endGeneration(span, failure ?? {});
    }
  }
}
