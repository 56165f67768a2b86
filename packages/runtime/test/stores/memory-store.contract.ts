import { ValidationError } from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import { bindMemory, memoryNamespace } from '../../src/stores/memory-binding.js';
import type { MemoryStore } from '../../src/stores/memory-store.js';

/** Builds a store for one test; the suite closes it afterwards. */
export type MemoryStoreFactory = () => MemoryStore | Promise<MemoryStore>;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

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

    it('expires a value after its ttl; a plain set keeps it forever', async () => {
      const store = await open();
      await store.set('app', 'short', 'soon gone', { ttlSeconds: 0.3 });
      await store.set('app', 'kept', 'stays');
      expect(await store.get('app', 'short')).toBe('soon gone');
      await sleep(450);
      expect(await store.get('app', 'short')).toBeUndefined();
      expect(await store.get('app', 'kept')).toBe('stays');
    });

    it('keeps the expiry on update unless a new ttl is given', async () => {
      const store = await open();
      await store.set('app', 'window', 1, { ttlSeconds: 0.3 });
      expect(await store.update('app', 'window', (n: number) => n + 1, 0)).toBe(2);
      await store.update('app', 'renewed', (n: number) => n + 1, 0, { ttlSeconds: 0.3 });
      await store.update('app', 'renewed', (n: number) => n + 1, 0, { ttlSeconds: 5 });
      await sleep(450);
      expect(await store.get('app', 'window')).toBeUndefined();
      expect(await store.get('app', 'renewed')).toBe(2);
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
