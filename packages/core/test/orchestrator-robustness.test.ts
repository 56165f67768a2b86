import { InvalidDecisionError, OrchestratorError, SwitchboardError, toolCall } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { decideWith, expectError } from './fixtures.js';

describe('decide() never rejects', () => {
  const badScripts: Array<[string, () => unknown]> = [
    ['throws an Error', () => Promise.reject(new Error('x'))],
    ['throws a Symbol', () => Promise.reject(Symbol('odd'))],
    ['throws a BigInt', () => Promise.reject(10n)],
    ['returns a Symbol', () => Symbol('decision')],
    ['returns a BigInt', () => 10n],
    ['returns NaN', () => Number.NaN],
    ['returns true', () => true],
    ['returns a Date', () => new Date()],
    ['returns a Map', () => new Map([['id', 'x']])],
    ['returns a sparse array', () => new Array(3)],
    ['returns a huge array of garbage', () => Array.from({ length: 10_000 }, (_, index) => index)],
    [
      'returns an array of 1000 valid calls plus one unknown',
      () => [
        ...Array.from({ length: 1000 }, (_, index) => toolCall('calculator', `${index}`)),
        toolCall('ghost', 'boo'),
      ],
    ],
    [
      'returns a thenable that rejects',
      // biome-ignore lint/suspicious/noThenProperty: a hand-made thenable is the case under test
      () => ({ then: (_: unknown, reject: (reason: unknown) => void) => reject('no') }),
    ],
    [
      'returns a thenable whose then throws',
      () => ({
        // biome-ignore lint/suspicious/noThenProperty: a hand-made thenable is the case under test
        then() {
          throw new Error('then exploded');
        },
      }),
    ],
    [
      'returns a Proxy that throws on every access',
      () =>
        new Proxy(
          {},
          {
            get() {
              throw new Error('trap');
            },
          },
        ),
    ],
    ['returns an object with a null prototype', () => Object.assign(Object.create(null), { id: 'a' })],
    ['returns a call with a non-string toolName', () => ({ id: 'a', toolName: 5, message: 'x' })],
    ['returns a call with toolName __proto__', () => ({ id: 'a', toolName: '__proto__', message: 'x' })],
    ['returns a call with toolName toString', () => ({ id: 'a', toolName: 'toString', message: 'x' })],
  ];

  it.each(badScripts)('resolves to an ErrorMessage when handleMessage %s', async (_label, script) => {
    const decision = await decideWith(script);
    const error = expectError(decision);
    expect(SwitchboardError.isInstance(error)).toBe(true);
    expect(error).toBeInstanceOf(Error);
  });

  it('resolves to an ErrorMessage when handleMessage throws an object with a null prototype', async () => {
    const decision = await decideWith(() => {
      throw Object.create(null);
    });
    expect(OrchestratorError.isInstance(expectError(decision))).toBe(true);
  });

  it('resolves to an ErrorMessage when reading the result throws', async () => {
    const decision = await decideWith(() => ({
      get error(): Error {
        throw new Error('getter exploded');
      },
    }));
    expect(InvalidDecisionError.isInstance(expectError(decision))).toBe(true);
  });

  it('never passes through a thrown marker-carrying object that is not an Error', async () => {
    const decision = await decideWith(() => {
      throw { [Symbol.for('switchboard.error')]: ['ValidationError', 'UserError', 'SwitchboardError'] };
    });
    expect(expectError(decision)).toBeInstanceOf(Error);
  });
});
