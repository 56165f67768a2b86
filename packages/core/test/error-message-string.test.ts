import { type ErrorMessage, InvalidDecisionError, isErrorMessage, SwitchboardError } from '@switchboard/core';
import { validateDecision } from '@switchboard/core/internal';
import { describe, expect, it } from 'vitest';
import { AGENTS, decideWith, expectError, sleep } from './fixtures.js';

describe('an ErrorMessage whose error is a string', () => {
  it('is accepted from handleMessage, the string becoming the message of an Error', async () => {
    const decision = await decideWith(() => ({
      error: 'no agent handles refunds',
      userMessage: 'Sorry, I cannot help with refunds here.',
    }));
    expect(isErrorMessage(decision)).toBe(true);
    const { error, userMessage } = decision as ErrorMessage;
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toBe('no agent handles refunds');
    // The orchestrator's own failure, not a malformed decision.
    expect(SwitchboardError.isInstance(error)).toBe(false);
    expect(userMessage).toBe('Sorry, I cannot help with refunds here.');
  });

  it('is accepted from an async handleMessage', async () => {
    const error = expectError(
      await decideWith(async () => {
        await sleep(1);
        return { error: 'the model gave up' };
      }),
    );
    expect(error.message).toBe('the model gave up');
  });

  it('is normalised where the runtime validates an orchestrator that does not extend the base class', () => {
    const decision = validateDecision({ error: 'route table missing' }, AGENTS);
    expect(expectError(decision).message).toBe('route table missing');
  });

  it('gets a message that says it had none when the string is empty', () => {
    const error = expectError(validateDecision({ error: '' }, AGENTS));
    expect(error.message).toBe('the orchestrator returned an error without a message');
  });

  it('still has its userMessage checked', async () => {
    const error = expectError(await decideWith(() => ({ error: 'x', userMessage: 42 })));
    expect(InvalidDecisionError.isInstance(error)).toBe(true);
    expect(error.message).toContain('userMessage is a number');
  });

  it('leaves an Error as it is', () => {
    const original = new Error('as given');
    expect(expectError(validateDecision({ error: original }, AGENTS))).toBe(original);
  });
});
