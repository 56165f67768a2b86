import { AsyncLocalStorage } from 'node:async_hooks';
import { ContextMissingError, type Memory, type MemoryScope, RequestContext } from '@switchboard/core';
import { describe, expect, it, vi } from 'vitest';
import { sleep } from './fixtures.js';

function fakeMemory(scope: MemoryScope): Memory {
  const unsupported = async () => ({ success: false as const, error: new Error('not used') });
  return {
    scope,
    getContent: unsupported,
    setContent: unsupported,
    deleteContent: unsupported,
    updateContent: unsupported,
  };
}

function createContext(
  requestId: string,
  memory: (scope: MemoryScope) => Memory = fakeMemory,
): RequestContext {
  return new RequestContext({
    sessionId: `ses_${requestId}`,
    requestId,
    userId: `user_${requestId}`,
    tenantId: 'tenant',
    signal: new AbortController().signal,
    memory,
  });
}

/** A small deterministic generator so a failure can be replayed. */
function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

describe('RequestContext outside a request', () => {
  it('current() throws ContextMissingError with a message that says where it works', () => {
    expect(() => RequestContext.current()).toThrow(ContextMissingError);
    try {
      RequestContext.current();
    } catch (error) {
      expect(ContextMissingError.isInstance(error)).toBe(true);
      expect((error as Error).message).toContain('No RequestContext is active');
      expect((error as Error).message).toContain('RequestContext.run()');
    }
  });

  it('tryCurrent() returns undefined', () => {
    expect(RequestContext.tryCurrent()).toBeUndefined();
  });
});

describe('RequestContext.run', () => {
  it('makes the context current inside, returns the result, and leaves nothing behind', async () => {
    const context = createContext('req_1');
    const result = await RequestContext.run(context, async () => {
      await sleep(1);
      return `${RequestContext.current().sessionId}/${RequestContext.current().userId}`;
    });
    expect(result).toBe('ses_req_1/user_req_1');
    expect(RequestContext.tryCurrent()).toBeUndefined();
  });

  it('exposes the fields and the abort signal the runtime gave it', () => {
    const controller = new AbortController();
    const context = new RequestContext({
      sessionId: 's',
      requestId: 'r',
      signal: controller.signal,
      memory: fakeMemory,
    });
    RequestContext.run(context, () => {
      const current = RequestContext.current();
      expect(current).toMatchObject({
        sessionId: 's',
        requestId: 'r',
        userId: undefined,
        tenantId: undefined,
      });
      controller.abort();
      expect(current.signal.aborted).toBe(true);
    });
  });

  it('restores the outer context after a nested run', async () => {
    const outer = createContext('outer');
    const inner = createContext('inner');
    await RequestContext.run(outer, async () => {
      await RequestContext.run(inner, async () => {
        await sleep(1);
        expect(RequestContext.current()).toBe(inner);
      });
      expect(RequestContext.current()).toBe(outer);
    });
  });

  it('keeps 200 interleaved async requests apart', async () => {
    const random = seededRandom(20_260_101);
    const delay = () => Math.floor(random() * 4);
    const seen: string[] = [];
    const mismatches: string[] = [];

    const check = (expected: string, where: string) => {
      const actual = RequestContext.current().requestId;
      seen.push(actual);
      if (actual !== expected) mismatches.push(`${expected} saw ${actual} ${where}`);
    };

    const handle = async (requestId: string) => {
      check(requestId, 'at start');
      await sleep(delay());
      check(requestId, 'after a timer');
      await Promise.resolve();
      check(requestId, 'after a microtask');
      await Promise.all(
        [0, 1, 2].map(async (branch) => {
          await sleep(delay());
          check(requestId, `in branch ${branch}`);
          await new Promise<void>((resolve) =>
            setTimeout(() => {
              check(requestId, `in a setTimeout callback of branch ${branch}`);
              resolve();
            }, delay()),
          );
        }),
      );
      await new Promise<void>((resolve) =>
        setImmediate(() => {
          check(requestId, 'in setImmediate');
          resolve();
        }),
      );
      await new Promise<void>((resolve) =>
        queueMicrotask(() => {
          check(requestId, 'in queueMicrotask');
          resolve();
        }),
      );
      return RequestContext.current().requestId;
    };

    const ids = Array.from({ length: 200 }, (_, index) => `req_${index}`);
    const results = await Promise.all(
      ids.map((id) => RequestContext.run(createContext(id), () => handle(id))),
    );

    expect(mismatches).toEqual([]);
    expect(results).toEqual(ids);
    // 11 checks per request, and the requests really did interleave.
    expect(seen).toHaveLength(200 * 11);
    const switches = seen.filter((id, index) => index > 0 && id !== seen[index - 1]).length;
    expect(switches).toBeGreaterThan(1000);
    expect(RequestContext.tryCurrent()).toBeUndefined();
  });
});

describe('RequestContext.getMemory', () => {
  it('creates each scope lazily, once, and defaults to the session scope', () => {
    const factory = vi.fn(fakeMemory);
    const context = createContext('req_memory', factory);
    expect(factory).not.toHaveBeenCalled();

    const session = context.getMemory();
    expect(session.scope).toBe('session');
    expect(context.getMemory('session')).toBe(session);
    const user = context.getMemory('user');
    const app = context.getMemory('app');
    expect(user.scope).toBe('user');
    expect(app.scope).toBe('app');
    expect(new Set([session, user, app]).size).toBe(3);
    expect(context.getMemory('user')).toBe(user);
    expect(context.getMemory('app')).toBe(app);

    expect(factory.mock.calls.map(([scope]) => scope)).toEqual(['session', 'user', 'app']);
  });

  it('does not share memories between two requests', () => {
    const first = createContext('a');
    const second = createContext('b');
    expect(first.getMemory()).not.toBe(second.getMemory());
  });
});

describe('RequestContext across copies of the package', () => {
  it('keeps its AsyncLocalStorage on globalThis under Symbol.for("switchboard.requestContext")', () => {
    const shared = (globalThis as Record<symbol, unknown>)[Symbol.for('switchboard.requestContext')];
    expect(shared).toBeInstanceOf(AsyncLocalStorage);
    const context = createContext('req_global');
    RequestContext.run(context, () => {
      expect((shared as AsyncLocalStorage<RequestContext>).getStore()).toBe(context);
    });
  });

  it('lets a second module instance see the context of the first, and the reverse', async () => {
    vi.resetModules();
    const copy = await import('@switchboard/core');
    expect(copy.RequestContext).not.toBe(RequestContext);

    const context = createContext('req_copy');
    await RequestContext.run(context, async () => {
      await sleep(1);
      expect(copy.RequestContext.current()).toBe(context);
    });

    const foreign = new copy.RequestContext({
      sessionId: 'ses_copy',
      requestId: 'req_foreign',
      signal: new AbortController().signal,
      memory: fakeMemory,
    });
    await copy.RequestContext.run(foreign, async () => {
      await sleep(1);
      expect(RequestContext.current().requestId).toBe('req_foreign');
    });
    expect(copy.RequestContext.tryCurrent()).toBeUndefined();
  });
});
