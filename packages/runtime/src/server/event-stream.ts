import { createId } from '@switchboard/core';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { TurnEvent } from '../engine/events.js';
import type { TurnResult } from '../engine/turn-engine.js';
import { logTurnFailure } from '../logging/turn-failure.js';
import { holdRequestLog, type RequestFacts, requestIdOf, requestLoggerOf } from './request-log.js';

/**
 * Runs a turn and answers with its events as Server-Sent Events. The
 * response starts only once the turn has started, so that errors before it
 * (a busy session, a store outage) still get a proper JSON status.
 */
export async function streamTurn(
  c: Context,
  run: (onEvent: (event: TurnEvent) => void) => TurnResult | Promise<TurnResult>,
): Promise<Response> {
  const queue: TurnEvent[] = [];
  let wake: (() => void) | undefined;
  let started!: () => void;
  const startedPromise = new Promise<void>((resolve) => {
    started = resolve;
  });
  let last: TurnEvent | undefined;
  const onEvent = (event: TurnEvent) => {
    last = event;
    queue.push(event);
    started();
    wake?.();
  };
  // A turn that throws at once fails before the stream starts, as one rejecting before its first event does.
  const done = Promise.resolve(run(onEvent));
  await Promise.race([startedPromise, done]);
  // The request's line waits for the turn's end, to carry its trace id and whole duration.
  const release = holdRequestLog(c);
  const facts = (): RequestFacts => ({
    sessionId: last?.sessionId,
    traceId: last?.type === 'turn-end' ? last.traceId : undefined,
  });
  done.then(
    () => release(facts()),
    (error: unknown) => {
      // Once the stream started, a turn that throws reaches no error handler: its detail is logged here.
      logTurnFailure(requestLoggerOf(c), error, {
        sessionId: last?.sessionId,
        turnId: last?.turnId,
        requestId: requestIdOf(c),
      });
      release(facts());
    },
  );

  return streamSSE(c, async (stream) => {
    let finished = false;
    let failure: unknown;
    done.then(
      () => {
        finished = true;
        wake?.();
      },
      (error: unknown) => {
        failure = error;
        finished = true;
        wake?.();
      },
    );
    for (;;) {
      while (queue.length > 0) {
        const event = queue.shift()!;
        await stream.writeSSE({ event: event.type, data: JSON.stringify(event), id: event.messageId });
      }
      if (finished) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
    // A failure after the dialog ended (an expired approval's continuation) was already told in the stream.
    if (failure !== undefined && !last?.endOfDialog) {
      const message =
        failure instanceof Error && 'kind' in failure && failure.kind === 'user'
          ? failure.message
          : 'The turn failed';
      await stream.writeSSE({
        event: 'error',
        data: JSON.stringify({
          type: 'error',
          sessionId: last?.sessionId,
          turnId: last?.turnId,
          messageId: createId('evt'),
          code: 'turn_failed',
          message,
          endOfMessage: true,
          endOfDialog: true,
        }),
      });
    }
  });
}
