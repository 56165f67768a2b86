import { AsyncResource } from 'node:async_hooks';

// Deadlines that share timers. An agent call's deadline joins the bucket of its due time, rounded up to a step
// (a hundredth of the delay, at least RESOLUTION_MS), and each bucket has one Node timer for as long as it is
// due: a call that ends in time only leaves its bucket, and an empty bucket's timer stops holding the process
// open (`unref`) until another deadline joins it or it fires. A Node timer made and cleared for every agent
// call cost about a tenth of a churn turn's CPU on Node 20 (each timer is an async resource, so the hooks of
// AsyncLocalStorage run for it too).

/** The finest step of a bucket: a deadline fires at most this much, or a hundredth of its delay, late. */
export const DEADLINE_RESOLUTION_MS = 10;

// Node's setTimeout fires at once (with a warning) past this: longer deadlines wait this long first.
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Bucket {
  readonly due: number;
  /**
   * Its first pending deadline, in a slot of its own; any others in `more`. Calls one after another join
   * and leave one bucket in turn, and a set emptied by each is one V8 reallocates on the next join
   * (measured on the churn bench: about 200 B a turn).
   */
  first: Deadline | undefined;
  more: Set<Deadline> | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
}

function isEmpty(bucket: Bucket): boolean {
  return bucket.first === undefined && !bucket.more?.size;
}

/** A pending deadline; end it with {@link endDeadline} when the call ends in time. */
export interface Deadline {
  readonly fire: () => void;
  bucket: Bucket | undefined;
}

const buckets = new Map<number, Bucket>();

// Bucket timers are made in this scope, not in the request that happened to open the bucket: a timer keeps
// the async context it was made in (its RequestContext, say) for as long as it is pending.
const scope = new AsyncResource('switchboard.deadlines');

function arm(bucket: Bucket, now: number): void {
  const delay = Math.min(MAX_TIMER_MS, Math.max(0, bucket.due - now));
  bucket.timer = scope.runInAsyncScope(() => setTimeout(expire, delay, bucket));
}

function expire(bucket: Bucket): void {
  const now = performance.now();
  // A timer may fire a millisecond early by performance.now(), or a long deadline may need more waiting.
  if (now < bucket.due) {
    const empty = isEmpty(bucket);
    arm(bucket, now);
    if (empty) bucket.timer?.unref();
    return;
  }
  buckets.delete(bucket.due);
  bucket.timer = undefined;
  const due = bucket.more ? [bucket.first, ...bucket.more] : [bucket.first];
  bucket.first = undefined;
  bucket.more = undefined;
  for (const deadline of due) {
    if (deadline === undefined) continue;
    deadline.bucket = undefined;
    try {
      deadline.fire();
    } catch (error) {
      // As a timer's own callback would: uncaught, and the other deadlines still fire.
      queueMicrotask(() => {
        throw error;
      });
    }
  }
}

/**
 * Calls `fire` once `delayMs` have passed since `from` (a `performance.now()`
 * reading; default now), unless {@link endDeadline} is called first; never
 * early, and late by at most a hundredth of the delay or
 * {@link DEADLINE_RESOLUTION_MS}, whichever is more.
 */
export function startDeadline(delayMs: number, fire: () => void, from = performance.now()): Deadline {
  const delay = Math.max(0, delayMs);
  const step = Math.max(DEADLINE_RESOLUTION_MS, Math.floor(delay / 100));
  const due = Math.ceil((from + delay) / step) * step;
  let bucket = buckets.get(due);
  if (!bucket) {
    bucket = { due, first: undefined, more: undefined, timer: undefined };
    buckets.set(due, bucket);
    arm(bucket, performance.now());
  } else if (isEmpty(bucket)) bucket.timer?.ref();
  const deadline: Deadline = { fire, bucket };
  if (bucket.first === undefined) bucket.first = deadline;
  else if (bucket.more) bucket.more.add(deadline);
  else bucket.more = new Set([deadline]);
  return deadline;
}

/** Forgets a deadline that has not fired (a no-op once it has); an emptied bucket's timer no longer holds the process open. */
export function endDeadline(deadline: Deadline): void {
  const { bucket } = deadline;
  if (!bucket) return;
  deadline.bucket = undefined;
  if (bucket.first === deadline) bucket.first = undefined;
  else bucket.more?.delete(deadline);
  if (isEmpty(bucket)) bucket.timer?.unref();
}

/** How many bucket timers hold the process open: those with a pending deadline (for tests). */
export function heldDeadlineTimers(): number {
  let held = 0;
  for (const bucket of buckets.values()) if (bucket.timer?.hasRef()) held++;
  return held;
}
