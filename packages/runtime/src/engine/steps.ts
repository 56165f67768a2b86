import { isPromiseLike } from '../promise-like.js';

/**
 * A turn written as a generator of steps: each `yield` hands over a value
 * that may still be pending. The driver resumes at once with a value that is
 * ready and awaits only a real promise, so a turn whose orchestrator, agents
 * and store all answer synchronously runs to its end in one go: no promise,
 * no microtask hop and, on Node 20, no async-hook callback per step. A turn
 * that does wait (a model call, Redis) is awaited step by step as an async
 * function would be.
 */
export type Steps<T> = Generator<unknown, T, unknown>;

/** Inside {@link Steps}: the value of `value`, waiting for it only when it is pending. */
export function* settled<T>(value: T | PromiseLike<T>): Steps<T> {
  return isPromiseLike<T>(value) ? ((yield value) as T) : value;
}

/**
 * Runs `steps` to their end: synchronously while every yielded value is
 * ready, then asynchronously from the first pending one. A throw inside the
 * steps is thrown (synchronously) or rejected (once asynchronous); a rejected
 * promise is thrown back into the steps at the `yield` that waited for it, so
 * their `try`/`catch`/`finally` blocks behave as in an async function.
 */
export function runSteps<T>(steps: Steps<T>): T | Promise<T> {
  let step = steps.next();
  while (!step.done) {
    if (isPromiseLike(step.value)) return continueSteps(steps, step.value);
    step = steps.next(step.value);
  }
  return step.value;
}

async function continueSteps<T>(steps: Steps<T>, first: PromiseLike<unknown>): Promise<T> {
  let pending = first;
  for (;;) {
    let value: unknown;
    let failure: { error: unknown } | undefined;
    try {
      value = await pending;
    } catch (error) {
      failure = { error };
    }
    let step = failure ? steps.throw(failure.error) : steps.next(value);
    while (!step.done && !isPromiseLike(step.value)) step = steps.next(step.value);
    if (step.done) return step.value;
    pending = step.value as PromiseLike<unknown>;
  }
}
