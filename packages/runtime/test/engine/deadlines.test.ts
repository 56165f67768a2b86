import { afterEach, describe, expect, it } from 'vitest';
import {
  DEADLINE_RESOLUTION_MS,
  endDeadline,
  heldDeadlineTimers,
  startDeadline,
} from '../../src/engine/deadlines.js';

const fired = (delayMs: number) =>
  new Promise<number>((resolve) => {
    const startedAt = performance.now();
    startDeadline(delayMs, () => resolve(performance.now() - startedAt));
  });

afterEach(() => {
  // Nothing left pending holds the process open.
  expect(heldDeadlineTimers()).toBe(0);
});

describe('shared deadlines', () => {
  it('fire once their delay has passed, never before it', async () => {
    const elapsed = await Promise.all([fired(1), fired(15), fired(40)]);
    expect(elapsed[0]).toBeGreaterThanOrEqual(1);
    expect(elapsed[1]).toBeGreaterThanOrEqual(15);
    expect(elapsed[2]).toBeGreaterThanOrEqual(40);
  });

  it('count from the given start (an agent call that already ran a while), never from before it', async () => {
    const from = performance.now() - 30;
    const sinceFrom = await new Promise<number>((resolve) =>
      startDeadline(40, () => resolve(performance.now() - from), from),
    );
    expect(sinceFrom).toBeGreaterThanOrEqual(40);
  });

  it('fire in the order they are due', async () => {
    const order: number[] = [];
    await new Promise<void>((resolve) => {
      for (const delay of [30, 5, 60, 15])
        startDeadline(delay, () => {
          order.push(delay);
          if (order.length === 4) resolve();
        });
    });
    expect(order).toEqual([5, 15, 30, 60]);
  });

  it('share one timer for deadlines due together, which stops holding the process once every one ended', () => {
    const deadlines = Array.from({ length: 100 }, () => startDeadline(60_000, () => {}));
    // All due within the same step (or, at a step's edge, the next one).
    expect(heldDeadlineTimers()).toBeGreaterThanOrEqual(1);
    expect(heldDeadlineTimers()).toBeLessThanOrEqual(2);
    for (const deadline of deadlines.slice(1)) endDeadline(deadline);
    expect(heldDeadlineTimers()).toBe(1);
    endDeadline(deadlines[0]!);
    expect(heldDeadlineTimers()).toBe(0);
    // A deadline joining the emptied bucket makes it hold the process again.
    const again = startDeadline(60_000, () => {});
    expect(heldDeadlineTimers()).toBe(1);
    endDeadline(again);
  });

  it('never fire once ended, while the others of their bucket still do', async () => {
    let endedFired = false;
    const ended = startDeadline(DEADLINE_RESOLUTION_MS, () => {
      endedFired = true;
    });
    const kept = fired(DEADLINE_RESOLUTION_MS);
    endDeadline(ended);
    endDeadline(ended);
    await kept;
    // A later deadline has fired too, so the ended one had every chance to.
    await fired(3 * DEADLINE_RESOLUTION_MS);
    expect(endedFired).toBe(false);
  });

  it('still fire the others of their bucket when one throws', async () => {
    const uncaught: unknown[] = [];
    const listener = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', listener);
    try {
      startDeadline(5, () => {
        throw new Error('a deadline that throws');
      });
      await fired(5);
      await new Promise((resolve) => setTimeout(resolve, 0));
    } finally {
      process.off('uncaughtException', listener);
    }
    expect(uncaught).toHaveLength(1);
  });
});
