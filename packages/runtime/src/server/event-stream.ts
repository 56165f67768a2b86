import { createId } from '@switchboard/core';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { outcomeOf, type StartedTurn, startTurn } from '../backend/turn-events.js';
import type { TurnEvent } from '../engine/events.js';
import type { TurnResult } from '../engine/turn-engine.js';
import { logTurnFailure } from '../logging/turn-failure.js';
import { holdRequestLog, type RequestFacts, requestIdOf, requestLoggerOf } from './request-log.js';
import { sseText } from './sse-text.js';
import { turnEventsPath } from './turn-event-routes.js';

/**
 * The request line of a streamed turn waits for the turn's end, to carry its
 * trace id and whole duration; a turn that throws once its stream started
 * reaches no error handler, so its detail is logged here.
 */
export function logWhenEnded(c: Context, turn: StartedTurn): void {
  const release = holdRequestLog(c);
  const facts = (): RequestFacts => {
    const { last } = turn;
    return { sessionId: last?.sessionId, traceId: last?.type === 'turn-end' ? last.traceId : undefined };
  };
  turn.done.then(
    () => release(facts()),
    (error: unknown) => {
      logTurnFailure(requestLoggerOf(c), error, {
        sessionId: turn.last?.sessionId,
        turnId: turn.last?.turnId,
        requestId: requestIdOf(c),
      });
      release(facts());
    },
  );
}

/**
 * The data of an event as streamed: a `turn-start` also says where the
 * turn's stream can be rejoined (`events`), when the app keeps its events.
 */
export function eventData(event: TurnEvent, rejoinable: boolean): string {
  if (!rejoinable || event.type !== 'turn-start') return JSON.stringify(event);
  return JSON.stringify({ ...event, events: turnEventsPath(event.sessionId, event.turnId) });
}

/**
 * Runs a turn and answers with its events as Server-Sent Events, each with
 * its `eventId` as the SSE `id`, the events of one batch (one tick) in one write. The response starts only once the turn has
 * started, so that errors before it (a busy session, a store outage) still
 * get a proper JSON status.
 */
export async function streamTurn(
  c: Context,
  run: (onEvent: (event: TurnEvent) => void) => TurnResult | Promise<TurnResult>,
  { rejoinable = false }: { rejoinable?: boolean } = {},
): Promise<Response> {
  const turn = await startTurn(run);
  logWhenEnded(c, turn);

  return streamSSE(c, async (stream) => {
    for await (const batch of turn.batches()) {
      let text = '';
      for (const event of batch) text += sseText(eventData(event, rejoinable), event.type, event.eventId);
      await stream.write(text);
    }
    const { failure } = await outcomeOf(turn);
    const { last } = turn;
    // A failure after the dialog ended (an expired approval's continuation) was already told in the stream.
    if (failure !== undefined && !last?.endOfDialog) {
      const message =
        failure instanceof Error && 'kind' in failure && failure.kind === 'user'
          ? failure.message
          : 'The turn failed';
      const error = {
        type: 'error',
        sessionId: last?.sessionId,
        turnId: last?.turnId,
        messageId: createId('evt'),
        code: 'turn_failed',
        message,
        endOfMessage: true,
        endOfDialog: true,
      };
      await stream.write(sseText(JSON.stringify(error), 'error'));
    }
  });
}
