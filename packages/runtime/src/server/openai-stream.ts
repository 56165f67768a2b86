import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { outcomeOf, startTurn } from '../backend/turn-events.js';
import type { TurnEvent } from '../engine/events.js';
import type { TurnResult } from '../engine/turn-engine.js';
import { logWhenEnded } from './event-stream.js';
import {
  type CompletionHeader,
  completionChunk,
  completionUsage,
  FINISH_REASON_BY_STATUS,
  switchboardExtension,
} from './openai-completion.js';
import type { OpenAiErrorBody } from './openai-errors.js';
import { sseText } from './sse-text.js';

/** Options of {@link streamCompletion}. */
export interface StreamCompletionOptions {
  header: CompletionHeader;
  /** `stream_options.include_usage`: a last chunk with `usage` and no choices. */
  includeUsage: boolean;
  /** The OpenAI error body for a turn that throws once the stream has started. */
  describeError(error: unknown): Promise<OpenAiErrorBody>;
  /**
   * `live` (default): an agent's deltas are content as they arrive, when its
   * call is the step's only one; `answer`: the content is the reply alone,
   * sent when the turn ends (request header `x-switchboard-stream: answer`).
   */
  mode?: 'live' | 'answer';
  /** Called with the content the client got in all, before the stream ends (remembers the conversation). */
  onAnswer?(content: string): Promise<void>;
}

/**
 * Runs a turn and answers with `chat.completion.chunk` events, as OpenAI
 * streams: a first chunk with the role, then the content, a chunk with the
 * `finish_reason` (and the `switchboard` extension), a usage chunk when
 * asked, and `data: [DONE]`.
 *
 * Every agent's deltas stream as they arrive on chunks with
 * `switchboard: { delta: { turnId, agent, toolCallId, content } }`. In the
 * default `live` mode the deltas of a step's only call are also the
 * content, as they arrive: most orchestrators hand the last agent's reply
 * to the user as it is, and then the content is exactly the reply. Which
 * text becomes the answer is known only when the orchestrator answers, so
 * when the reply turns out to be something else (the orchestrator rewrote
 * it, or another agent answered), the rest of the reply follows (its
 * remainder when it starts with what was streamed, else the whole reply
 * after a blank line) and the final chunk says `switchboard.contentIsReply:
 * false`; `switchboard.reply` is always the exact reply. An orchestrator
 * that writes the answer itself (`streamAnswer`, e.g. a supervisor's
 * synthesis) streams it as content the same way. In `answer` mode
 * the content is the reply alone, sent when the turn ends or pauses.
 *
 * The response starts once the turn has started, so that errors before it
 * (a busy session, a store outage) still get a JSON status; a turn that
 * throws later ends the stream with OpenAI's `data: { error }` event.
 */
export async function streamCompletion(
  c: Context,
  run: (onEvent: (event: TurnEvent) => void) => TurnResult | Promise<TurnResult>,
  { header, includeUsage, describeError, mode = 'live', onAnswer }: StreamCompletionOptions,
): Promise<Response> {
  const turn = await startTurn(run);
  logWhenEnded(c, turn);

  return streamSSE(c, async (stream) => {
    // The chunks of one batch of events (one tick) are written at once (see `StartedTurn.batches`).
    let pending = '';
    const write = (chunk: object) => {
      pending += sseText(JSON.stringify(chunk));
    };
    const flush = async () => {
      if (pending === '') return;
      const written = pending;
      pending = '';
      await stream.write(written);
    };
    // The chunks' id is the turn's, known from its `turn-start` (a resumed earlier turn's events are not ours).
    let id: string | undefined;
    // Live content: the call whose deltas are content (the current step's only call), and what was sent.
    let liveCall: string | undefined;
    let streamed = '';
    let answerReset = false;
    let answering = false;
    const open = (turnId: string) => {
      id = `chatcmpl-${turnId}`;
      write(completionChunk(id, header, { role: 'assistant', content: '' }));
    };
    for await (const batch of turn.batches()) {
      for (const event of batch) {
        if (id === undefined && event.type === 'turn-start' && event.resumed === undefined) {
          open(event.turnId);
        } else if (id === `chatcmpl-${event.turnId}` && event.type === 'route') {
          const { kind, calls } = event.step;
          if (kind !== 'note')
            liveCall = mode === 'live' && kind === 'call' ? calls[0]?.toolCallId : undefined;
        } else if (id === `chatcmpl-${event.turnId}` && event.type === 'agent-delta') {
          const { turnId, agent, toolCallId, delta } = event;
          const live = toolCallId === liveCall;
          if (live) streamed += delta;
          write({
            ...completionChunk(id, header, live ? { content: delta } : {}),
            switchboard: { delta: { turnId, agent, toolCallId, content: delta } },
          });
        } else if (id === `chatcmpl-${event.turnId}` && event.type === 'answer-delta' && mode === 'live') {
          // The orchestrator writes the answer itself (a synthesis): its text is the content as it comes.
          // What was sent cannot be taken back: after a reset, or after an agent's text went out as content,
          // the reply follows whole at the end.
          liveCall = undefined;
          if (event.reset || (!answering && streamed !== '')) answerReset = true;
          if (answerReset) continue;
          answering = true;
          streamed += event.delta;
          write(completionChunk(id, header, { content: event.delta }));
        }
      }
      // The turn's last batch shares its write with the closing chunks.
      if (!turn.ended) await flush();
    }
    const { result, failure } = await outcomeOf(turn);
    if (!result) {
      write(await describeError(failure));
      await flush();
      return;
    }
    if (id !== `chatcmpl-${result.turnId}`) open(result.turnId);
    const chunkId = `chatcmpl-${result.turnId}`;
    const { reply } = result;
    const rest =
      reply === streamed
        ? ''
        : reply.startsWith(streamed)
          ? reply.slice(streamed.length)
          : streamed
            ? `\n\n${reply}`
            : reply;
    await onAnswer?.(streamed + rest);
    if (rest !== '') write(completionChunk(chunkId, header, { content: rest }));
    write({
      ...completionChunk(chunkId, header, {}, FINISH_REASON_BY_STATUS[result.status]),
      switchboard: { ...switchboardExtension(result), reply, contentIsReply: streamed + rest === reply },
    });
    if (includeUsage)
      write({ ...completionChunk(chunkId, header, undefined), usage: completionUsage(result.usage) });
    pending += sseText('[DONE]');
    await flush();
  });
}
