import {
  AgentError,
  AgentTimeoutError,
  ConfigurationError,
  ContextMissingError,
  CorruptRecordError,
  InvalidDecisionError,
  MaxHopsExceededError,
  NotFoundError,
  OrchestratorError,
  SessionBusyError,
  StoreUnavailableError,
  SwitchboardError,
  SystemError,
  UnknownAgentError,
  UserError,
  ValidationError,
} from '@switchboard/core';
import { describe, expect, it, vi } from 'vitest';

const MARKER = Symbol.for('switchboard.error');

/** One instance of every concrete error, with the kind and code a caller relies on. */
const samples: Array<[string, () => SwitchboardError, 'user' | 'system', string]> = [
  [
    'ValidationError',
    () => new ValidationError({ issues: ['message: required'] }),
    'user',
    'validation_error',
  ],
  ['NotFoundError', () => new NotFoundError({ resource: 'Session', id: 'ses_1' }), 'user', 'not_found'],
  [
    'SessionBusyError',
    () => new SessionBusyError({ sessionId: 'ses_1', waitedMs: 500 }),
    'user',
    'session_busy',
  ],
  ['ConfigurationError', () => new ConfigurationError({ message: 'bad' }), 'system', 'configuration_error'],
  [
    'UnknownAgentError',
    () => new UnknownAgentError({ agent: 'x', knownAgents: ['a'] }),
    'system',
    'unknown_agent',
  ],
  [
    'InvalidDecisionError',
    () => new InvalidDecisionError({ message: 'empty' }),
    'system',
    'invalid_decision',
  ],
  [
    'OrchestratorError',
    () => new OrchestratorError({ orchestrator: 'o', cause: 'x' }),
    'system',
    'orchestrator_error',
  ],
  ['MaxHopsExceededError', () => new MaxHopsExceededError({ maxHops: 10 }), 'system', 'max_hops_exceeded'],
  ['AgentError', () => new AgentError({ agent: 'clock', cause: new Error('x') }), 'system', 'agent_error'],
  [
    'AgentTimeoutError',
    () => new AgentTimeoutError({ agent: 'clock', timeoutMs: 60_000 }),
    'system',
    'agent_timeout',
  ],
  ['StoreUnavailableError', () => new StoreUnavailableError({}), 'system', 'store_unavailable'],
  [
    'CorruptRecordError',
    () => new CorruptRecordError({ key: 'k', detail: 'bad JSON' }),
    'system',
    'corrupt_record',
  ],
  ['ContextMissingError', () => new ContextMissingError(), 'system', 'context_missing'],
];

describe('error classes', () => {
  it.each(samples)(
    '%s has its class name, kind and code, and is a real Error',
    (name, create, kind, code) => {
      const error = create();
      expect(error.name).toBe(name);
      expect(error.constructor.name).toBe(name);
      expect(error.kind).toBe(kind);
      expect(error.code).toBe(code);
      expect(error).toBeInstanceOf(Error);
      expect(error.message.length).toBeGreaterThan(0);
      expect(error.stack).toContain(name);
      expect(String(error)).toBe(`${name}: ${error.message}`);
      expect(SwitchboardError.isInstance(error)).toBe(true);
      expect(UserError.isInstance(error)).toBe(kind === 'user');
      expect(SystemError.isInstance(error)).toBe(kind === 'system');
    },
  );

  it('builds messages a person can act on', () => {
    expect(
      new ValidationError({ message: 'Bad request', issues: ['a: required', 'b: too long'] }).message,
    ).toBe('Bad request: a: required; b: too long');
    expect(new ValidationError({}).message).toBe('Invalid input');
    expect(new NotFoundError({ resource: 'Session', id: 'ses_1' }).message).toBe(
      "Session 'ses_1' was not found",
    );
    expect(new SessionBusyError({ sessionId: 'ses_1', waitedMs: 500 }).message).toContain('waited 500 ms');
    expect(new AgentTimeoutError({ agent: 'clock', timeoutMs: 1500 }).message).toBe(
      "Agent 'clock' failed: timed out after 1500 ms",
    );
    expect(new AgentError({ agent: 'clock', cause: new Error('disk full') }).message).toBe(
      "Agent 'clock' failed: disk full",
    );
    expect(new MaxHopsExceededError({ maxHops: 3 }).message).toContain('3 routing hops');
    expect(new CorruptRecordError({ key: 'sb:ses_1', detail: 'bad JSON' }).message).toBe(
      "Stored record 'sb:ses_1' is corrupt: bad JSON",
    );
  });

  it('keeps the cause and the structured fields', () => {
    const cause = new Error('ECONNREFUSED');
    expect(new StoreUnavailableError({ cause }).cause).toBe(cause);
    expect(new ValidationError({ issues: ['x'] }).issues).toEqual(['x']);
    expect(new AgentTimeoutError({ agent: 'clock', timeoutMs: 5 })).toMatchObject({
      agent: 'clock',
      timeoutMs: 5,
    });
    expect(new ConfigurationError({ message: 'm' }).cause).toBeUndefined();
    expect('cause' in new ConfigurationError({ message: 'm' })).toBe(false);
  });
});

describe('isInstance', () => {
  it('recognises a subclass through every ancestor and nothing else', () => {
    const timeout = new AgentTimeoutError({ agent: 'clock', timeoutMs: 10 });
    expect(AgentTimeoutError.isInstance(timeout)).toBe(true);
    expect(AgentError.isInstance(timeout)).toBe(true);
    expect(SystemError.isInstance(timeout)).toBe(true);
    expect(SwitchboardError.isInstance(timeout)).toBe(true);
    expect(UserError.isInstance(timeout)).toBe(false);
    expect(ValidationError.isInstance(timeout)).toBe(false);

    const agentError = new AgentError({ agent: 'clock', message: 'crashed' });
    expect(AgentTimeoutError.isInstance(agentError)).toBe(false);
    expect(AgentError.isInstance(agentError)).toBe(true);
  });

  it('recognises user errors as user errors only', () => {
    const error = new SessionBusyError({ sessionId: 's', waitedMs: 1 });
    expect(UserError.isInstance(error)).toBe(true);
    expect(SystemError.isInstance(error)).toBe(false);
    expect(NotFoundError.isInstance(error)).toBe(false);
  });

  it.each([
    ['a plain Error', new Error('x')],
    ['an Error named like a Switchboard error', Object.assign(new Error('x'), { name: 'ValidationError' })],
    ['null', null],
    ['undefined', undefined],
    ['a string', 'ValidationError'],
    ['an empty object', {}],
    ['an object with a non-array marker', { [MARKER]: 'ValidationError' }],
  ])('rejects %s', (_label, value) => {
    expect(SwitchboardError.isInstance(value)).toBe(false);
    expect(ValidationError.isInstance(value)).toBe(false);
  });

  it('recognises errors created by another copy of the package, both ways', async () => {
    vi.resetModules();
    const copy = await import('@switchboard/core');
    expect(copy.AgentTimeoutError).not.toBe(AgentTimeoutError);

    const foreign = new copy.AgentTimeoutError({ agent: 'clock', timeoutMs: 10 });
    expect(foreign).not.toBeInstanceOf(AgentTimeoutError);
    expect(AgentTimeoutError.isInstance(foreign)).toBe(true);
    expect(AgentError.isInstance(foreign)).toBe(true);
    expect(SystemError.isInstance(foreign)).toBe(true);
    expect(SwitchboardError.isInstance(foreign)).toBe(true);
    expect(UserError.isInstance(foreign)).toBe(false);

    const local = new ValidationError({ message: 'x' });
    expect(copy.ValidationError.isInstance(local)).toBe(true);
    expect(copy.UserError.isInstance(local)).toBe(true);
    expect(copy.SystemError.isInstance(local)).toBe(false);
  });

  it('recognises an object carrying the Symbol.for marker, as a copied class would build it', () => {
    const copied = Object.assign(new Error('copied'), {
      [MARKER]: ['AgentTimeoutError', 'AgentError', 'SystemError', 'SwitchboardError'],
    });
    expect(AgentTimeoutError.isInstance(copied)).toBe(true);
    expect(AgentError.isInstance(copied)).toBe(true);
    expect(SwitchboardError.isInstance(copied)).toBe(true);
    expect(UserError.isInstance(copied)).toBe(false);
  });

  it('marks an instance with its class chain under the shared Symbol.for key', () => {
    const error = new AgentTimeoutError({ agent: 'clock', timeoutMs: 10 });
    expect((error as unknown as Record<symbol, unknown>)[MARKER]).toEqual([
      'AgentTimeoutError',
      'AgentError',
      'SystemError',
      'SwitchboardError',
    ]);
  });

  it('works for a user-defined subclass', () => {
    class PaymentDeclinedError extends UserError {
      readonly code = 'payment_declined';
    }
    const error = new PaymentDeclinedError({ message: 'Card declined' });
    expect(error.name).toBe('PaymentDeclinedError');
    expect(error.kind).toBe('user');
    expect(PaymentDeclinedError.isInstance(error)).toBe(true);
    expect(UserError.isInstance(error)).toBe(true);
    expect(ValidationError.isInstance(error)).toBe(false);
  });
});
