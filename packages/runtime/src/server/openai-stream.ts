import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { TurnEvent } from '../engine/events.js';
import type { TurnResult } from '../engine/turn-engine.js';
import {
  type CompletionHeader,
  completionChunk,
  completionUsage,
  FINISH_REASON_BY_STATUS,
  switchboardExtension,
} from './openai-completion.js';
import type { OpenAiErrorBody } from './openai-errors.js';

/** Options of {@link streamCompletion}. */
export interface StreamCompletionOptions {
  header: CompletionHeader;
  /** `stream_options.include_usage`: a last chunk with `usage` and no choices. */
  includeUsage: boolean;
  /** The OpenAI error body for a turn that throws once the stream has started. */
  describeError(error: unknown): Promise<OpenAiErrorBody>;
}

/**
 * Runs a turn and answers with `chat.completion.chunk` events, as OpenAI
 * streams: a first chunk with the role, then the content, a chunk with the
 * `finish_reason` (and the `switchboard` extension), a usage chunk when
 * asked, and `data: [DONE]`.
 *
 * Which agent call's text becomes the answer is known only when the
 * orchestrator answers the user (it may call another agent, combine
 * replies or rephrase), so the content is the turn's reply, sent when the
 * turn ends or pauses: the concatenated content always equals the reply of
 * the non-streaming answer. Agents' deltas stream as they arrive, on
 * chunks with an empty `delta` and `switchboard: { delta: { turnId, agent,
 * toolCallId, content } }`: a client can show progress, and one that
 * ignores the extension sees only the answer.
 *
 * The response starts once the turn has started, so that errors before it
 * (a busy session, a store outage) still get a JSON status; a turn that
 * throws later ends the stream with OpenAI's `data: { error }` event.
 */
export async function streamCompletion(
  c: Context,
  run: (onEvent: (event: TurnEvent) => void) => TurnResult | Promise<TurnResult>,
  { header, includeUsage, describeError }: StreamCompletionOptions,
): Promise<Response> {
  const queue: TurnEvent[] = [];
  let wake: (() => void) | undefined;
  let started!: () => void;
  const startedPromise = new Promise<void>((resolve) => {
    started = resolve;
  });
  const onEvent = (event: TurnEvent) => {
    queue.push(event);
    started();
    wake?.();
  };
  // A turn that throws at once fails before the stream starts, as one rejecting before its first event does.
  const done = Promise.resolve(run(onEvent));
  await Promise.race([startedPromise, done]);

  return streamSSE(c, async (stream) => {
    let result: TurnResult | undefined;
    let failure: unknown;
    let finished = false;
    done.then(
      (value) => {
        result = value;
        finished = true;
        wake?.();
      },
      (error: unknown) => {
        failure = error ?? new Error('The turn failed');
        finished = true;
        wake?.();
      },
    );
    const write = (chunk: object) => stream.writeSSE({ data: JSON.stringify(chunk) });
    // The chunks' id is the turn's, known from its `turn-start` (a resumed earlier turn's events are not ours).
    let id: string | undefined;
    const open = async (turnId: string) => {
      id = `chatcmpl-${turnId}`;
      await write(completionChunk(id, header, { role: 'assistant', content: '' }));
    };
    for (;;) {
      while (queue.length > 0) {
        const event = queue.shift()!;
        if (id === undefined && event.type === 'turn-start' && event.resumed === undefined) {
          await open(event.turnId);
        } else if (id === `chatcmpl-${event.turnId}` && event.type === 'agent-delta') {
          const { turnId, agent, toolCallId, delta } = event;
          await write({
            ...completionChunk(id, header, {}),
            switchboard: { delta: { turnId, agent, toolCallId, content: delta } },
          });
        }
      }
      if (finished) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
    if (!result) {
      await write(await describeError(failure));
      return;
    }
    if (id !== `chatcmpl-${result.turnId}`) await open(result.turnId);
    const chunkId = `chatcmpl-${result.turnId}`;
    await write(completionChunk(chunkId, header, { content: result.reply }));
    await write({
      ...completionChunk(chunkId, header, {}, FINISH_REASON_BY_STATUS[result.status]),
      switchboard: switchboardExtension(result),
    });
    if (includeUsage)
      await write({ ...completionChunk(chunkId, header, undefined), usage: completionUsage(result.usage) });
    await stream.writeSSE({ data: '[DONE]' });
  });
}
