import { describe, expect, it } from 'vitest';
import { runSteps, type Steps, settled } from '../../src/engine/steps.js';

describe('runSteps', () => {
  it('runs steps whose values are all ready to the end at once, without a promise', () => {
    function* add(): Steps<number> {
      const a = yield* settled(1);
      const b = yield* settled(2);
      return a + b;
    }
    expect(runSteps(add())).toBe(3);
  });

  it('waits at the first pending value and goes on with what it resolved to', async () => {
    const order: string[] = [];
    function* steps(): Steps<string> {
      order.push('start');
      const fetched = yield* settled(Promise.resolve('fetched'));
      order.push(fetched);
      const later = yield* settled('ready');
      return `${fetched}+${later}`;
    }
    const result = runSteps(steps());
    expect(result).toBeInstanceOf(Promise);
    order.push('returned');
    expect(await result).toBe('fetched+ready');
    expect(order).toEqual(['start', 'returned', 'fetched']);
  });

  it('throws a rejection back in at the step that waited, where try/catch handles it', async () => {
    function* steps(): Steps<string> {
      try {
        yield* settled(Promise.reject(new Error('store down')));
        return 'unreachable';
      } catch (error) {
        const recovered = yield* settled(Promise.resolve(`recovered from ${(error as Error).message}`));
        return recovered;
      }
    }
    expect(await runSteps(steps())).toBe('recovered from store down');
  });

  it('runs finally blocks, including their own waits, before a failure reaches the caller', async () => {
    const cleanedUp: string[] = [];
    function* failing(pendingFirst: boolean): Steps<never> {
      try {
        if (pendingFirst) yield* settled(Promise.resolve());
        throw new Error('agent exploded');
      } finally {
        yield* settled(new Promise((resolve) => setTimeout(resolve, 5)));
        cleanedUp.push(pendingFirst ? 'async' : 'sync');
      }
    }
    await expect(runSteps(failing(true))).rejects.toThrow('agent exploded');
    await expect(runSteps(failing(false))).rejects.toThrow('agent exploded');
    expect(cleanedUp).toEqual(['async', 'sync']);
  });

  it('throws synchronously when ready steps throw', () => {
    let released = false;
    function* steps(): Steps<never> {
      try {
        const decision = yield* settled('not a decision');
        throw new Error(`bad decision: ${decision}`);
      } finally {
        released = true;
      }
    }
    expect(() => runSteps(steps())).toThrow('bad decision: not a decision');
    expect(released).toBe(true);
  });

  it('treats any thenable as pending, and a thenable whose then throws as a rejection', async () => {
    function* steps(): Steps<string> {
      // biome-ignore lint/suspicious/noThenProperty: a hand-made thenable is the case under test
      const thenable = { then: (resolve: (value: string) => void) => resolve('thenable') };
      const value = yield* settled(thenable as unknown as PromiseLike<string>);
      try {
        yield* settled({
          // biome-ignore lint/suspicious/noThenProperty: a hand-made thenable is the case under test
          then() {
            throw new Error('then exploded');
          },
        });
      } catch (error) {
        return `${value}, ${(error as Error).message}`;
      }
      return value;
    }
    expect(await runSteps(steps())).toBe('thenable, then exploded');
  });
});
