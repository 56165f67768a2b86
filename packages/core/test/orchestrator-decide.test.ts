import {
  type ErrorMessage,
  InvalidDecisionError,
  OrchestratorError,
  ROUTE_TO_USER,
  routeToUser,
  toolCall,
  UnknownAgentError,
  ValidationError,
} from '@switchboard/core';
import { describe, expect, it, vi } from 'vitest';
import {
  AGENTS,
  conversationOf,
  decideWith,
  expectError,
  firstHop,
  ScriptedOrchestrator,
  sleep,
  toolMessage,
  userMessage,
} from './fixtures.js';

describe('decide(): a throwing orchestrator', () => {
  it('turns a thrown Error into an ErrorMessage that names the orchestrator and keeps the cause', async () => {
    const cause = new Error('lookup table missing');
    const orchestrator = new ScriptedOrchestrator(
      () => {
        throw cause;
      },
      { name: 'billing-router' },
    );
    const error = expectError(await orchestrator.decide(firstHop()));
    expect(OrchestratorError.isInstance(error)).toBe(true);
    expect(error.message).toBe("Orchestrator 'billing-router' failed: lookup table missing");
    expect(error.cause).toBe(cause);
  });

  it('turns a rejected promise into the same ErrorMessage', async () => {
    const error = expectError(
      await decideWith(async () => {
        await sleep(1);
        throw new TypeError('cannot read x');
      }),
    );
    expect(OrchestratorError.isInstance(error)).toBe(true);
    expect(error.message).toContain("'scripted'");
    expect(error.message).toContain('cannot read x');
  });

  it.each([
    ['a string', 'plain failure', 'plain failure'],
    ['a number', 42, '42'],
    ['null', null, 'null'],
    ['undefined', undefined, 'undefined'],
    ['a plain object', { code: 7 }, '[object Object]'],
  ])('describes a thrown %s in the message', async (_label, thrown, shown) => {
    const error = expectError(
      await decideWith(() => {
        throw thrown;
      }),
    );
    expect(OrchestratorError.isInstance(error)).toBe(true);
    expect(error.message).toBe(`Orchestrator 'scripted' failed: ${shown}`);
  });

  it('lets a thrown SwitchboardError through unchanged', async () => {
    const thrown = new ValidationError({ message: 'Bad order', issues: ['quantity must be positive'] });
    const error = expectError(
      await decideWith(() => {
        throw thrown;
      }),
    );
    expect(error).toBe(thrown);
    expect(error.message).toBe('Bad order: quantity must be positive');
  });

  it('lets a SwitchboardError thrown by another copy of the package through unchanged', async () => {
    vi.resetModules();
    const copy = await import('@switchboard/core');
    expect(copy.ValidationError).not.toBe(ValidationError);
    const thrown = new copy.ValidationError({ message: 'from a copy' });
    const error = expectError(
      await decideWith(() => {
        throw thrown;
      }),
    );
    expect(error).toBe(thrown);
  });
});

describe('decide(): calls to unknown agents', () => {
  it('turns a call to an agent outside conversation.agents into UnknownAgentError naming the known agents', async () => {
    const error = expectError(await decideWith(() => toolCall('weather', 'rain in Oslo?')));
    expect(UnknownAgentError.isInstance(error)).toBe(true);
    expect(error.message).toBe("Unknown agent 'weather'; known agents: calculator, clock, converter");
    expect(error).toMatchObject({ agent: 'weather', knownAgents: ['calculator', 'clock', 'converter'] });
  });

  it('rejects a fan-out when any one call names an unknown agent', async () => {
    const error = expectError(
      await decideWith(() => [toolCall('calculator', '1+1'), toolCall('Calculator', '2+2')]),
    );
    expect(UnknownAgentError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ agent: 'Calculator' });
  });

  it('says "(none)" when no agent may be called', async () => {
    const error = expectError(await decideWith(() => toolCall('clock', 'time?'), firstHop('time?', [])));
    expect(error.message).toBe("Unknown agent 'clock'; known agents: (none)");
  });

  it('checks against the narrowed conversation.agents, not every agent the orchestrator knows', async () => {
    const narrowed = conversationOf([userMessage('what time is it')], { agents: [AGENTS[1]!] });
    const blocked = expectError(await decideWith(() => toolCall('calculator', '2+2'), narrowed));
    expect(UnknownAgentError.isInstance(blocked)).toBe(true);
    expect(blocked).toMatchObject({ agent: 'calculator', knownAgents: ['clock'] });

    const fanOut = expectError(
      await decideWith(() => [toolCall('clock', 'now'), toolCall('converter', '1 km in m')], narrowed),
    );
    expect(fanOut).toMatchObject({ agent: 'converter', knownAgents: ['clock'] });

    const allowed = toolCall('clock', 'now');
    expect(await decideWith(() => allowed, narrowed)).toBe(allowed);
  });

  it('always allows route_to_user, even with no candidate agents', async () => {
    const answer = routeToUser('I cannot help with that');
    expect(await decideWith(() => answer, firstHop('hi', []))).toBe(answer);
  });
});

describe('decide(): malformed results become InvalidDecisionError', () => {
  const valid = { id: 'call_1', toolName: 'calculator', message: '1+1' };
  it.each([
    ['an empty array', () => [], 'an empty array of tool calls'],
    ['a call without an id', () => ({ toolName: 'calculator', message: '1+1' }), 'id'],
    ['a call with an empty id', () => ({ ...valid, id: '' }), 'id'],
    ['a call without a toolName', () => ({ id: 'call_1', message: '1+1' }), 'toolName'],
    ['a call whose message is not a string', () => ({ ...valid, message: 12 }), 'message'],
    ['a number', () => 42, 'not a ToolCall'],
    ['a string', () => 'calculator', 'not a ToolCall'],
    ['null', () => null, 'not a ToolCall'],
    ['undefined', () => undefined, 'not a ToolCall'],
    ['a function', () => () => valid, 'not a ToolCall'],
    ['an ErrorMessage whose error is neither an Error nor a string', () => ({ error: 42 }), 'not a ToolCall'],
    ['an array holding null', () => [valid, null], 'not a ToolCall'],
    ['an array holding a number', () => [1], 'not a ToolCall'],
    ['a nested array', () => [[valid]], 'not a ToolCall'],
    ['an array holding an ErrorMessage', () => [{ error: new Error('x') }], 'not a ToolCall'],
    [
      'an ErrorMessage whose userMessage is not a string',
      () => ({ error: new Error('x'), userMessage: 42 }),
      'userMessage is a number',
    ],
  ])('rejects %s', async (_label, script, detail) => {
    const error = expectError(await decideWith(script));
    expect(InvalidDecisionError.isInstance(error)).toBe(true);
    expect(error.message).toMatch(/^Invalid orchestrator decision: /);
    expect(error.message).toContain(detail);
  });

  it('rejects route_to_user mixed into a fan-out', async () => {
    const error = expectError(
      await decideWith(() => [toolCall('calculator', '1+1'), routeToUser('done'), toolCall('clock', 'now')]),
    );
    expect(InvalidDecisionError.isInstance(error)).toBe(true);
    expect(error.message).toContain(`'${ROUTE_TO_USER}' cannot be combined with other calls`);
  });

  it('rejects two calls that share an id, naming the id', async () => {
    const error = expectError(
      await decideWith(() => [
        toolCall('calculator', '1+1', { id: 'call_same' }),
        toolCall('clock', 'now', { id: 'call_same' }),
      ]),
    );
    expect(InvalidDecisionError.isInstance(error)).toBe(true);
    expect(error.message).toContain("two tool calls share the id 'call_same'");
  });
});

describe('decide(): valid decisions pass through unchanged', () => {
  it('returns a single call as is, extra fields included', async () => {
    const call = toolCall('calculator', '2 + 2', {
      thought: 'arithmetic',
      reason: 'digits',
      input: { x: 1 },
    });
    const decision = await decideWith(() => call);
    expect(decision).toBe(call);
    expect(decision).toEqual({
      id: call.id,
      toolName: 'calculator',
      message: '2 + 2',
      input: { x: 1 },
      thought: 'arithmetic',
      reason: 'digits',
    });
  });

  it('returns a fan-out array as is, in call order, the same agent allowed twice', async () => {
    const calls = [
      toolCall('converter', '1 km in m'),
      toolCall('calculator', '1+1'),
      toolCall('calculator', '2+2'),
    ];
    const decision = await decideWith(() => calls);
    expect(decision).toBe(calls);
    expect((decision as typeof calls).map((call) => call.message)).toEqual(['1 km in m', '1+1', '2+2']);
  });

  it('returns route_to_user as is', async () => {
    const answer = routeToUser('4', { reason: 'the calculator answered' });
    const conversation = conversationOf([userMessage('2+2'), toolMessage('calculator', '4')], { hop: 1 });
    expect(await decideWith(() => answer, conversation)).toBe(answer);
  });

  it('returns an ErrorMessage as is, with its userMessage', async () => {
    const errorMessage: ErrorMessage = {
      error: new Error('quota exhausted'),
      userMessage: 'Try again tomorrow',
    };
    expect(await decideWith(() => errorMessage)).toBe(errorMessage);
  });

  it('awaits an async handleMessage', async () => {
    const call = toolCall('clock', 'now');
    const decision = await decideWith(async () => {
      await sleep(2);
      await Promise.resolve();
      return call;
    });
    expect(decision).toBe(call);
  });

  it('answers a synchronous handleMessage synchronously, checked, and an async one with a promise', async () => {
    const call = toolCall('clock', 'now');
    const orchestrator = new ScriptedOrchestrator(() => call);
    expect(orchestrator.decide(firstHop())).toBe(call);
    const unknown = new ScriptedOrchestrator(() => toolCall('nobody', 'x')).decide(firstHop());
    expect(UnknownAgentError.isInstance(expectError(unknown as ErrorMessage))).toBe(true);
    const thrown = new ScriptedOrchestrator(() => {
      throw new Error('boom');
    }).decide(firstHop());
    expect(OrchestratorError.isInstance(expectError(thrown as ErrorMessage))).toBe(true);

    const pending = new ScriptedOrchestrator(async () => call).decide(firstHop());
    expect(pending).toBeInstanceOf(Promise);
    expect(await pending).toBe(call);
  });

  it('validates what an async handleMessage resolves to', async () => {
    const error = expectError(await decideWith(async () => toolCall('nobody', 'x')));
    expect(UnknownAgentError.isInstance(error)).toBe(true);
  });

  it('passes the conversation it was given to handleMessage', async () => {
    const orchestrator = new ScriptedOrchestrator(() => routeToUser('hi'));
    const conversation = firstHop('hi');
    await orchestrator.decide(conversation);
    expect(orchestrator.seen).toEqual([conversation]);
    expect(orchestrator.seen[0]).toBe(conversation);
  });
});
