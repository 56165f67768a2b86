import { type MemoryResult, StoreUnavailableError, ValidationError } from '@switchboard/core';
import { afterEach, describe, expect, it, type TestContext } from 'vitest';
import { bindMemory, memoryNamespace } from '../../src/stores/memory-binding.js';
import { canTouch, type MemoryStore } from '../../src/stores/memory-store.js';

/** Builds a store for one test; the suite closes it afterwards. */
export type MemoryStoreFactory = () => MemoryStore | Promise<MemoryStore>;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** How a Memory call ended: resolved to a value, rejected, or threw before returning a promise. */
type CallOutcome<T> = { resolved: T } | { rejected: unknown } | { threwSynchronously: unknown };

/** Calls `call` and reports how it ended, so an assertion shows a throw instead of being cut short by it. */
async function outcomeOf<T>(call: () => Promise<T>): Promise<CallOutcome<T>> {
  let pending: Promise<T>;
  try {
    pending = call();
  } catch (error) {
    return { threwSynchronously: error };
  }
  try {
    return { resolved: await pending };
  } catch (error) {
    return { rejected: error };
  }
}

/** The `{ success: false, error }` a Memory call must resolve to, with `error` matching `error`. */
function failedWith(error: unknown): { resolved: MemoryResult<never> } {
  return { resolved: { success: false, error: error as Error } };
}

/** A value `JSON.stringify` rejects: it refers to itself. */
function cyclic(): Record<string, unknown> {
  const value: Record<string, unknown> = { name: 'loop' };
  value.self = value;
  return value;
}

type DataMethod = 'get' | 'set' | 'delete' | 'update';
const DATA_METHODS: readonly DataMethod[] = ['get', 'set', 'delete', 'update'];

/**
 * `store` with its data methods failing like a backend outage: rejecting with
 * `error` (`'reject'`), or throwing it before returning a promise
 * (`'throw'`, as a store without `async` methods does). Everything else is the real store.
 */
function failingStore(store: MemoryStore, error: Error, how: 'reject' | 'throw'): MemoryStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      if ((DATA_METHODS as readonly PropertyKey[]).includes(property)) {
        return how === 'reject'
          ? () => Promise.reject(error)
          : () => {
              throw error;
            };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * The behaviour every {@link MemoryStore} must show, as one suite that runs
 * against each implementation.
 */
export function describeMemoryStoreContract(name: string, factory: MemoryStoreFactory): void {
  describe(`MemoryStore contract: ${name}`, () => {
    const opened: MemoryStore[] = [];
    const open = async () => {
      const store = await factory();
      opened.push(store);
      return store;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close?.()));
    });
    /** For a test that runs alongside others (`it.concurrent`): its store is closed when it ends. */
    const openFor = async ({ onTestFinished }: TestContext) => {
      const store = await factory();
      onTestFinished(() => store.close?.());
      return store;
    };

    it('reads back what was written, and undefined for an absent key', async () => {
      const store = await open();
      expect(await store.get('app', 'missing')).toBeUndefined();
      await store.set('app', 'profile', { name: 'Ada', tags: ['x'], age: 36, admin: false, note: null });
      expect(await store.get('app', 'profile')).toEqual({
        name: 'Ada',
        tags: ['x'],
        age: 36,
        admin: false,
        note: null,
      });
      await store.set('app', 'profile', 'replaced');
      expect(await store.get('app', 'profile')).toBe('replaced');
      await store.set('app', 'zero', 0);
      expect(await store.get('app', 'zero')).toBe(0);
    });

    it('gives the default through the Memory API when a key is absent', async () => {
      const memory = bindMemory(await open(), 'session', 'session:s1');
      expect(await memory.getContent('theme', 'light')).toEqual({ success: true, data: 'light' });
      expect(await memory.setContent('theme', 'dark')).toEqual({ success: true, data: 'dark' });
      expect(await memory.getContent('theme', 'light')).toEqual({ success: true, data: 'dark' });
      expect(await memory.updateContent('count', (n: number) => n + 1, 10)).toEqual({
        success: true,
        data: 11,
      });
      expect(await memory.deleteContent('theme')).toEqual({ success: true, data: true });
    });

    it('stores copies, so callers cannot change stored values by mutation', async () => {
      const store = await open();
      const value = { items: [1] };
      await store.set('app', 'list', value);
      value.items.push(2);
      const read = (await store.get('app', 'list')) as { items: number[] };
      read.items.push(3);
      expect(await store.get('app', 'list')).toEqual({ items: [1] });
    });

    it('rejects a value that is not JSON', async () => {
      const store = await open();
      const error = await store.set('app', 'bad', () => 1).catch((caught: unknown) => caught);
      expect(ValidationError.isInstance(error)).toBe(true);
      expect(await store.get('app', 'bad')).toBeUndefined();
    });

    // Each of these waits past a ttl on its own store: they wait side by side.
    it.concurrent('expires a value after its ttl; a plain set keeps it forever', async (context) => {
      const store = await openFor(context);
      await store.set('app', 'short', 'soon gone', { ttlSeconds: 0.3 });
      await store.set('app', 'kept', 'stays');
      expect(await store.get('app', 'short')).toBe('soon gone');
      await sleep(450);
      expect(await store.get('app', 'short')).toBeUndefined();
      expect(await store.get('app', 'kept')).toBe('stays');
    });

    it.concurrent('keeps the expiry on update unless a new ttl is given', async (context) => {
      const store = await openFor(context);
      await store.set('app', 'window', 1, { ttlSeconds: 0.3 });
      expect(await store.update('app', 'window', (n: number) => n + 1, 0)).toBe(2);
      await store.update('app', 'renewed', (n: number) => n + 1, 0, { ttlSeconds: 0.3 });
      await store.update('app', 'renewed', (n: number) => n + 1, 0, { ttlSeconds: 5 });
      await sleep(450);
      expect(await store.get('app', 'window')).toBeUndefined();
      expect(await store.get('app', 'renewed')).toBe(2);
    });

    it.concurrent('touch extends renewable values only, and a write with its own ttl ends renewal', async (context) => {
      const store = await openFor(context);
      if (!canTouch(store)) throw new Error(`${name} should support touch()`);
      const ns = 'session:touched';
      await store.set(ns, 'profile', { step: 1 }, { ttlSeconds: 0.6, renewable: true });
      await store.update(ns, 'count', (n: number) => n + 1, 0, { ttlSeconds: 0.6, renewable: true });
      await store.update(ns, 'count', (n: number) => n + 1, 0); // no ttl: stays renewable
      await store.set(ns, 'code', 'one-time', { ttlSeconds: 0.6 });
      await store.set(ns, 'was-renewable', 'x', { ttlSeconds: 0.6, renewable: true });
      await store.set(ns, 'was-renewable', 'y', { ttlSeconds: 0.6 });
      await store.set('session:other', 'profile', 'other', { ttlSeconds: 0.6, renewable: true });
      for (let round = 0; round < 3; round++) {
        await sleep(250);
        await store.touch(ns, 0.6);
      }
      // 750 ms after the writes, past their 600 ms: only what touch extended is left.
      expect(await store.get(ns, 'profile')).toEqual({ step: 1 });
      expect(await store.get(ns, 'count')).toBe(2);
      expect(await store.get(ns, 'code')).toBeUndefined();
      expect(await store.get(ns, 'was-renewable')).toBeUndefined();
      expect(await store.get('session:other', 'profile')).toBeUndefined();
      await store.delete(ns, 'profile');
      await store.touch(ns, 0.6);
      expect(await store.get(ns, 'profile')).toBeUndefined();
      await sleep(800);
      expect(await store.get(ns, 'count')).toBeUndefined();
    });

    it('deletes a value and says whether it existed', async () => {
      const store = await open();
      await store.set('app', 'key', 'value');
      expect(await store.delete('app', 'key')).toBe(true);
      expect(await store.delete('app', 'key')).toBe(false);
      expect(await store.get('app', 'key')).toBeUndefined();
    });

    it('keeps session, user and app namespaces apart', async () => {
      const store = await open();
      const owner = { sessionId: 's1', userId: 'u1' };
      const namespaces = (['session', 'user', 'app'] as const).map((scope) => memoryNamespace(scope, owner));
      for (const namespace of namespaces) await store.set(namespace, 'key', namespace);
      // Namespaces and keys containing the separator must not collide either.
      await store.set('a', 'b:c', 'first');
      await store.set('a:b', 'c', 'second');
      expect(await Promise.all(namespaces.map((namespace) => store.get(namespace, 'key')))).toEqual(
        namespaces,
      );
      expect(await store.get('a', 'b:c')).toBe('first');
      expect(await store.get('session:s2', 'key')).toBeUndefined();
    });

    it('clears one namespace and nothing else', async () => {
      const store = await open();
      await Promise.all(
        Array.from({ length: 250 }, (_, index) => store.set('session:s1', `key-${index}`, index)),
      );
      await store.set('session:s1', 'expiring', 'x', { ttlSeconds: 60 });
      await store.set('session:s10', 'key-1', 'neighbour');
      await store.set('app', 'key-1', 'app');
      await store.clear('session:s1');
      expect(await store.get('session:s1', 'key-1')).toBeUndefined();
      expect(await store.get('session:s1', 'key-249')).toBeUndefined();
      expect(await store.get('session:s1', 'expiring')).toBeUndefined();
      expect(await store.get('session:s10', 'key-1')).toBe('neighbour');
      expect(await store.get('app', 'key-1')).toBe('app');
      await store.set('session:s1', 'key-1', 'again');
      expect(await store.get('session:s1', 'key-1')).toBe('again');
    });

    it('loses no update under 100 concurrent increments', async () => {
      const store = await open();
      const results = await Promise.all(
        Array.from({ length: 100 }, () => store.update('app', 'counter', (n: number) => n + 1, 0)),
      );
      expect(await store.get('app', 'counter')).toBe(100);
      expect([...results].sort((a, b) => a - b)).toEqual(
        Array.from({ length: 100 }, (_, index) => index + 1),
      );
    });

    describe('Memory API results are values, never exceptions', () => {
      const notJson: Array<[string, () => unknown]> = [
        ['a BigInt', () => 10n],
        ['a cycle', cyclic],
      ];

      it.each(notJson)(
        'setContent of %s resolves to { success: false, error } and keeps the stored value',
        async (_what, value) => {
          const store = await open();
          const memory = bindMemory(store, 'session', 'session:s1');
          expect(await memory.setContent('profile', { name: 'Ada' })).toEqual({
            success: true,
            data: { name: 'Ada' },
          });

          const outcome = await outcomeOf(() => memory.setContent('profile', value()));
          expect(outcome).toEqual(failedWith(expect.any(Error)));
          const { error } = (outcome as { resolved: { error: Error } }).resolved;
          expect(ValidationError.isInstance(error)).toBe(true);
          expect(error.message).toContain('profile');

          expect(await memory.getContent('profile')).toEqual({ success: true, data: { name: 'Ada' } });
          // An absent key stays absent.
          expect(await outcomeOf(() => memory.setContent('fresh', value()))).toEqual(
            failedWith(expect.any(Error)),
          );
          expect(await memory.getContent('fresh', 'none')).toEqual({ success: true, data: 'none' });
        },
      );

      it.each(notJson)(
        'updateContent whose function returns %s resolves to { success: false, error } and keeps the stored value',
        async (_what, value) => {
          const memory = bindMemory(await open(), 'session', 'session:s1');
          expect(await memory.setContent('count', 3)).toEqual({ success: true, data: 3 });

          const outcome = await outcomeOf(() => memory.updateContent('count', () => value() as number, 0));
          expect(outcome).toEqual(failedWith(expect.any(Error)));
          const { error } = (outcome as { resolved: { error: Error } }).resolved;
          expect(ValidationError.isInstance(error)).toBe(true);
          expect(error.message).toContain('count');

          expect(await memory.getContent('count')).toEqual({ success: true, data: 3 });
          expect(await outcomeOf(() => memory.updateContent('absent', () => value() as number, 0))).toEqual(
            failedWith(expect.any(Error)),
          );
          expect(await memory.getContent('absent', 'none')).toEqual({ success: true, data: 'none' });
        },
      );

      it('updateContent whose function throws resolves to { success: false, error } with that error and changes nothing', async () => {
        const memory = bindMemory(await open(), 'user', 'user:u1');
        expect(await memory.setContent('cart', { items: ['book'] })).toEqual({
          success: true,
          data: { items: ['book'] },
        });
        const thrown = new Error('cart rules violated');

        const outcome = await outcomeOf(() =>
          memory.updateContent(
            'cart',
            (cart: { items: string[] }) => {
              cart.items.push('pen');
              throw thrown;
            },
            { items: [] },
          ),
        );
        expect(outcome).toEqual(failedWith(thrown));
        expect((outcome as { resolved: { error: Error } }).resolved.error).toBe(thrown);
        expect(await memory.getContent('cart')).toEqual({ success: true, data: { items: ['book'] } });

        // A thrown non-Error still comes back as an Error.
        const odd = await outcomeOf(() =>
          memory.updateContent(
            'cart',
            () => {
              throw 'not an Error';
            },
            { items: [] },
          ),
        );
        expect(odd).toEqual(failedWith(expect.objectContaining({ message: 'not an Error' })));
        expect((odd as { resolved: { error: unknown } }).resolved.error).toBeInstanceOf(Error);
        // The key is still usable afterwards.
        expect(
          await memory.updateContent(
            'cart',
            (cart: { items: string[] }) => ({ items: [...cart.items, 'pen'] }),
            {
              items: [],
            },
          ),
        ).toEqual({ success: true, data: { items: ['book', 'pen'] } });
      });

      it.each([
        ['rejects', 'reject'],
        ['throws before returning a promise', 'throw'],
      ] as const)(
        'every method resolves to { success: false, error } when the store %s',
        async (_what, how) => {
          const outage = new StoreUnavailableError({ message: 'memory backend unreachable' });
          const memory = bindMemory(failingStore(await open(), outage, how), 'app', 'app');

          expect({
            getContent: await outcomeOf(() => memory.getContent('theme', 'light')),
            setContent: await outcomeOf(() => memory.setContent('theme', 'dark')),
            deleteContent: await outcomeOf(() => memory.deleteContent('theme')),
            updateContent: await outcomeOf(() => memory.updateContent('visits', (n: number) => n + 1, 0)),
          }).toEqual({
            getContent: failedWith(outage),
            setContent: failedWith(outage),
            deleteContent: failedWith(outage),
            updateContent: failedWith(outage),
          });
        },
      );
    });

    it('passes a fresh copy of the default to the update function', async () => {
      const store = await open();
      const defaultValue = { items: [] as string[] };
      const append = (item: string) => (current: { items: string[] }) => {
        current.items.push(item);
        return current;
      };
      await store.update('app', 'list', append('a'), defaultValue);
      expect(await store.update('app', 'list', append('b'), defaultValue)).toEqual({ items: ['a', 'b'] });
      expect(defaultValue).toEqual({ items: [] });
    });
  });
}
