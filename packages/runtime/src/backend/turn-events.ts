import type { TurnEvent } from '../engine/events.js';
import type { TurnResult } from '../engine/turn-types.js';

/** A turn that has started, whose events a streamed response writes as they come. */
export interface StartedTurn {
  /**
   * The turn's events, in order, until it ends (or fails), in batches: the
   * events that came in one turn of the event loop (the deltas of one read
   * of the model's stream), or while the previous batch was being written.
   * A client cannot tell such events apart in time, so each batch is one
   * write of the response.
   */
  batches(): AsyncGenerator<TurnEvent[], void>;
  /** The turn's result; rejects when it failed. */
  readonly done: Promise<TurnResult>;
  /** The last event seen so far. */
  readonly last: TurnEvent | undefined;
  /** True once the turn has ended: the batch taken last is its last, and what follows it can join its write. */
  readonly ended: boolean;
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
  let queue: TurnEvent[] = [];
  let started!: () => void;
  const startedPromise = new Promise<void>((resolve) => {
    started = resolve;
  });
  let last: TurnEvent | undefined;
  let finished = false;
  // The consumer waits for the end of the event loop's turn (setImmediate), so that the events of one tick
  // (200 deltas of one read of a model's stream) are one batch, written at once: measured by the stream-relay
  // bench (bench/streaming-relay.ts), one write per event cost a write and its promises per delta.
  let waiting: (() => void) | undefined;
  let scheduled = false;
  const resume = () => {
    scheduled = false;
    const waiter = waiting;
    waiting = undefined;
    waiter?.();
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(resume);
  };
  const onEvent = (event: TurnEvent) => {
    last = event;
    queue.push(event);
    started();
    if (waiting) schedule();
  };
  // A turn that throws at once fails before the stream starts, as one rejecting before its first event does.
  const done = Promise.resolve(run(onEvent));
  await Promise.race([startedPromise, done]);
  const finish = () => {
    finished = true;
    if (waiting) schedule();
  };
  done.then(finish, finish);
  return {
    done,
    get last() {
      return last;
    },
    get ended() {
      return finished;
    },
    async *batches() {
      for (;;) {
        if (queue.length === 0 && finished) return;
        await new Promise<void>((resolve) => {
          waiting = resolve;
          if (queue.length > 0 || finished) schedule();
        });
        if (queue.length === 0) continue;
        const batch = queue;
        queue = [];
        yield batch;
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
