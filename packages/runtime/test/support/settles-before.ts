import { setTimeout as delay } from 'node:timers/promises';

/**
 * Settles as `operation` does, provided it settles before `sentinel`; rejects
 * naming `sentinelName` when the sentinel settles first. How a test says
 * "this does not wait for that" without a wall-clock bound: the sentinel
 * stands for what the bug would wait for (a twin with a longer timeout, a
 * lease's own expiry, a delayed answer), started with the operation, so that
 * a slow machine slows both alike.
 *
 * @example
 * ```ts
 * // Failed by its own 300 ms command timeout, not by the twin's 20 times longer one.
 * const error = await settlesBefore(store.ping(), twin.ping(), "the twin's 6 s timeout").catch((e) => e);
 * ```
 */
export async function settlesBefore<T>(
  operation: Promise<T>,
  sentinel: Promise<unknown>,
  sentinelName: string,
): Promise<T> {
  const sentinelFirst = Symbol('sentinel first');
  const first = await Promise.race([
    operation.then(
      () => undefined,
      () => undefined,
    ),
    sentinel.then(
      () => sentinelFirst,
      () => sentinelFirst,
    ),
  ]);
  if (first === sentinelFirst) throw new Error(`it did not settle before ${sentinelName}`);
  return operation;
}

/**
 * A sentinel that settles `ms` from now, for a failure mode known by its delay
 * only (an answer scripted to come late, a key's remaining time to live). Its
 * timer holds nothing open.
 */
export function lapse(ms: number): Promise<void> {
  return delay(ms, undefined, { ref: false });
}
