import type { Context, Span } from '@opentelemetry/api';
import type { TokenUsage } from '@switchboard/core';
import { recordError, setSessionAttributes } from '../tracing/span-attributes.js';
import { spanTime } from '../tracing/span-clock.js';
import { startChildSpan } from '../tracing/spans.js';

export type { TokenUsage };

/** What a generation span records when it starts. */
export interface GenerationStart {
  /** The trace context to nest under (the agent's or the decision's span). */
  parent: Context;
  model: string;
  /** The span's name (the observation's name in Langfuse). Default `chat <model>`. */
  name?: string;
  /** The messages sent; serialised only when the span records. */
  input: unknown;
  temperature?: number;
}

/**
 * Starts a Langfuse generation for one chat-completions call: an OpenTelemetry
 * span in Switchboard's scope with the GenAI attributes Langfuse reads (model,
 * input; usage and output once {@link endGeneration} ends it), and the
 * session and user of the current request. Use it to trace the model calls of
 * your own orchestrators and agents the way the built-in ones are traced.
 *
 * @example
 * ```ts
 * const span = startGeneration({ parent: context.active(), model: 'gpt-4o-mini', input: messages });
 * ```
 */
export function startGeneration({
  parent,
  model,
  name = `chat ${model}`,
  input,
  temperature,
}: GenerationStart): Span {
  const span = startChildSpan(name, parent);
  if (span.isRecording()) {
    setSessionAttributes(span);
    span.setAttributes({
      'langfuse.observation.type': 'generation',
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': model,
      'langfuse.observation.input': JSON.stringify(input),
    });
    if (temperature !== undefined) span.setAttribute('gen_ai.request.temperature', temperature);
  }
  return span;
}

/**
 * Ends a generation with the model's output, usage or error.
 *
 * @example
 * ```ts
 * endGeneration(span, { output: message, usage: { inputTokens: 120, outputTokens: 30 } });
 * ```
 */
export function endGeneration(
  span: Span,
  {
    output,
    usage,
    responseModel,
    finishReason,
    error,
  }: {
    output?: unknown;
    usage?: TokenUsage;
    responseModel?: string;
    finishReason?: string;
    error?: unknown;
  },
): void {
  if (span.isRecording()) {
    if (output !== undefined) span.setAttribute('langfuse.observation.output', JSON.stringify(output));
    if (usage) {
      span.setAttributes({
        'gen_ai.usage.input_tokens': usage.inputTokens,
        'gen_ai.usage.output_tokens': usage.outputTokens,
      });
    }
    if (responseModel) span.setAttribute('gen_ai.response.model', responseModel);
    if (finishReason) span.setAttribute('gen_ai.response.finish_reasons', [finishReason]);
    if (error !== undefined) recordError(span, error);
  }
  span.end(spanTime());
}

/**
 * Starts the span of one tool execution requested by the model.
 *
 * @example
 * ```ts
 * const span = startToolSpan(parent, { name: 'add', toolCallId: call.id, input: call.function.arguments });
 * ```
 */
export function startToolSpan(
  parent: Context,
  { name, toolCallId, input }: { name: string; toolCallId: string; input: string },
): Span {
  const span = startChildSpan(`tool ${name}`, parent);
  if (span.isRecording()) {
    setSessionAttributes(span);
    span.setAttributes({
      'langfuse.observation.type': 'tool',
      'gen_ai.tool.name': name,
      'gen_ai.tool.call.id': toolCallId,
      'langfuse.observation.input': input,
    });
  }
  return span;
}

/**
 * Ends a tool span with what was fed back to the model.
 *
 * @example
 * ```ts
 * endToolSpan(span, { output: '5' });
 * ```
 */
export function endToolSpan(span: Span, { output, error }: { output: string; error?: unknown }): void {
  if (span.isRecording()) {
    span.setAttribute('langfuse.observation.output', JSON.stringify(output));
    if (error !== undefined) recordError(span, error);
  }
  span.end(spanTime());
}
