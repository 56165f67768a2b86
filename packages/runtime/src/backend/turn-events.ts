import type { TurnEvent } from '../engine/events.js';
import type { TurnResult } from '../engine/turn-types.js';

/** A turn that has started, whose events a streamed response writes as they come. */
export interface StartedTurn {
  /** The turn's events, in order, until it ends (or fails). */
  events(): AsyncGenerator<TurnEvent, void>;
  /** The turn's result; rejects when it failed. */
  readonly done: Promise<TurnResult>;
  /** The last event seen so far. */
  readonly last: TurnEvent | undefined;
}

/**
 * Runs a turn with an event listener and resolves once it has started (its
 * first event), so that a streamed response starts only then: a turn that
 * fails before any event (a busy session, a store outage) rejects here, and
 * its request still gets a proper JSON status. The SSE routes (`/v1/chat`,
 * approvals, the OpenAI-compatible stream) share it.
 */
export async function startTurn(
  run: (onEvent: (event: TurnEvent) => void) => TurnResult | Promise<TurnResult>,
): Promise<StartedTurn> {
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
  let finished = false;
  const finish = () => {
    finished = true;
    wake?.();
  };
  done.then(finish, finish);
  return {
    done,
    get last() {
      return last;
    },
    async *events() {
      for (;;) {
        while (queue.length > 0) yield queue.shift() as TurnEvent;
        if (finished) return;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
    },
  };
}

/** The turn's result, or its failure, once it has ended (never rejects). */
export function outcomeOf(turn: StartedTurn): Promise<{ result?: TurnResult; failure?: unknown }> {
  return turn.done.then(
    (result) => ({ result }),
    (failure: unknown) => ({ failure: failure ?? new Error('The turn failed') }),
  );
}
