import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { outcomeOf, startTurn } from '../backend/turn-events.js';
import type { TurnEvent } from '../engine/events.js';
import type { TurnResult } from '../engine/turn-engine.js';
import { logWhenEnded } from './event-stream.js';
import type { OpenAiErrorBody } from './openai-errors.js';
import {
  outputMessage,
  RESPONSE_STATUS_BY_TURN,
  type ResponseParts,
  responseObject,
} from './openai-responses.js';
import { sseText } from './sse-text.js';

/** Options of {@link streamResponse}. */
export interface StreamResponseOptions {
  /** The parts of the response of a turn: running (no result yet) or ended, with the text the client got. */
  partsOf(turn: { sessionId: string; turnId: string }, result?: TurnResult, text?: string): ResponseParts;
  /** The OpenAI error body for a turn that throws once the stream has started. */
  describeError(error: unknown): Promise<OpenAiErrorBody>;
  /** Called with the text the client got in all, before the last events (remembers or forgets the conversation). */
  onAnswer?(text: string, result: TurnResult): Promise<void>;
}

/**
 * Runs a turn and answers with the Responses API's stream: `response.created`,
 * `response.in_progress`, `response.output_item.added`,
 * `response.content_part.added`, then `response.output_text.delta` as text
 * comes, `response.output_text.done`, `response.content_part.done`,
 * `response.output_item.done` and `response.completed` (`response.incomplete`
 * for a blocked turn). Every event is named by its `type` (`event:`) and
 * numbered by `sequence_number`. Which text streams live is decided as on
 * chat completions (`streamCompletion`): the deltas of a step's only agent
 * call and an orchestrator's own streamed answer, then whatever of the reply
 * the client has not got yet; `response.output_text.done` carries the
 * whole text sent. A turn that throws once started ends with an `error` event.
 */
export async function streamResponse(
  c: Context,
  run: (onEvent: (event: TurnEvent) => void) => TurnResult | Promise<TurnResult>,
  { partsOf, describeError, onAnswer }: StreamResponseOptions,
): Promise<Response> {
  const turn = await startTurn(run);
  logWhenEnded(c, turn);

  return streamSSE(c, async (stream) => {
    let sequence = 0;
    // The events of one batch of turn events (one tick) are written at once (see `StartedTurn.batches`).
    let pending = '';
    const send = (type: string, fields: object) => {
      pending += sseText(JSON.stringify({ type, ...fields, sequence_number: sequence++ }), type);
    };
    const flush = async () => {
      if (pending === '') return;
      const written = pending;
      pending = '';
      await stream.write(written);
    };
    let ids: { sessionId: string; turnId: string } | undefined;
    let itemId = '';
    let liveCall: string | undefined;
    let streamed = '';
    let answering = false;
    let answerReset = false;
    const delta = (text: string) =>
      send('response.output_text.delta', {
        item_id: itemId,
        output_index: 0,
        content_index: 0,
        delta: text,
        logprobs: [],
      });
    const open = (sessionId: string, turnId: string) => {
      ids = { sessionId, turnId };
      const parts = partsOf(ids);
      itemId = parts.itemId;
      const response = responseObject(parts, { inProgress: true });
      send('response.created', { response });
      send('response.in_progress', { response });
      send('response.output_item.added', {
        output_index: 0,
        item: outputMessage(itemId, '', 'in_progress'),
      });
      send('response.content_part.added', {
        item_id: itemId,
        output_index: 0,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
      });
    };
    const ours = (event: TurnEvent) => ids !== undefined && event.turnId === ids.turnId;
    for await (const batch of turn.batches()) {
      for (const event of batch) {
        if (ids === undefined && event.type === 'turn-start' && event.resumed === undefined) {
          open(event.sessionId, event.turnId);
        } else if (ours(event) && event.type === 'route') {
          const { kind, calls } = event.step;
          if (kind !== 'note') liveCall = kind === 'call' ? calls[0]?.toolCallId : undefined;
        } else if (ours(event) && event.type === 'agent-delta' && event.toolCallId === liveCall) {
          streamed += event.delta;
          delta(event.delta);
        } else if (ours(event) && event.type === 'answer-delta') {
          liveCall = undefined;
          if (event.reset || (!answering && streamed !== '')) answerReset = true;
          if (answerReset) continue;
          answering = true;
          streamed += event.delta;
          delta(event.delta);
        }
      }
      // The turn's last batch shares its write with the closing chunks.
      if (!turn.ended) await flush();
    }
    const { result, failure } = await outcomeOf(turn);
    if (!result) {
      const { error } = await describeError(failure);
      send('error', { code: error.code, message: error.message, param: error.param });
      await flush();
      return;
    }
    if (ids?.turnId !== result.turnId) open(result.sessionId, result.turnId);
    const { reply } = result;
    const rest =
      reply === streamed
        ? ''
        : reply.startsWith(streamed)
          ? reply.slice(streamed.length)
          : streamed
            ? `\n\n${reply}`
            : reply;
    const text = streamed + rest;
    await onAnswer?.(text, result);
    if (rest !== '') delta(rest);
    const parts = partsOf({ sessionId: result.sessionId, turnId: result.turnId }, result, text);
    const status = RESPONSE_STATUS_BY_TURN[result.status];
    const where = { item_id: itemId, output_index: 0, content_index: 0 };
    send('response.output_text.done', { ...where, text, logprobs: [] });
    send('response.content_part.done', {
      ...where,
      part: { type: 'output_text', text, annotations: [], logprobs: [] },
    });
    send('response.output_item.done', { output_index: 0, item: outputMessage(itemId, text, status) });
    const response = responseObject(parts);
    send(status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
    await flush();
  });
}
