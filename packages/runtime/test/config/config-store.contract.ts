import { afterEach, describe, expect, it } from 'vitest';
import type { ConfigChange, ConfigStore } from '../../src/config/config-store.js';

/** Builds a store for one test; the suite closes it afterwards. */
export type ConfigStoreFactory = () => ConfigStore;

const LIMITS = { maxItemsPerScope: 3, maxVersionsKept: 4 };
const at = '2026-01-01T00:00:00.000Z';
const change = (name: string, value: unknown, more: Partial<ConfigChange> = {}): ConfigChange => ({
  type: 'keywords',
  name,
  value,
  updatedAt: at,
  ...more,
});

/** The behaviour every {@link ConfigStore} shares: versions per scope, compare-and-set, history, limits, notifications. */
export function describeConfigStoreContract(label: string, factory: ConfigStoreFactory): void {
  describe(`ConfigStore contract: ${label}`, () => {
    let store: ConfigStore;
    const open = () => {
      store = factory();
      return store;
    };
    afterEach(async () => {
      await store?.close?.();
    });

    it('numbers every change of a scope, keeps scopes apart, and lists the live items', async () => {
      const config = open();
      const first = await config.write(
        'tenant:a',
        change('clock', { keywords: ['time'] }, { updatedBy: 'ops' }),
        LIMITS,
      );
      const second = await config.write(
        'tenant:a',
        change('echo', { keywords: ['echo'] }, { comment: 'new' }),
        LIMITS,
      );
      const other = await config.write('tenant:b', change('clock', { keywords: ['date'] }), LIMITS);
      expect([first, second, other].map((result) => result.ok && result.entry.version)).toEqual([1, 2, 1]);
      expect(first).toEqual({
        ok: true,
        entry: {
          type: 'keywords',
          name: 'clock',
          version: 1,
          value: { keywords: ['time'] },
          updatedAt: at,
          updatedBy: 'ops',
        },
      });
      const snapshot = await config.snapshot('tenant:a');
      expect(snapshot.version).toBe(2);
      expect(snapshot.entries.map((entry) => [entry.name, entry.value]).sort()).toEqual([
        ['clock', { keywords: ['time'] }],
        ['echo', { keywords: ['echo'] }],
      ]);
      expect(await config.snapshot('tenant:none')).toEqual({ version: 0, entries: [] });
    });

    it('compares and sets: a stale or missing expected version changes nothing', async () => {
      const config = open();
      await config.write('app', change('clock', { keywords: ['time'] }), LIMITS);
      expect(
        await config.write('app', change('clock', { keywords: ['x'] }, { expectedVersion: 0 }), LIMITS),
      ).toEqual({
        ok: false,
        refusal: { kind: 'conflict', currentVersion: 1 },
      });
      expect(
        await config.write('app', change('clock', { keywords: ['x'] }, { expectedVersion: 7 }), LIMITS),
      ).toEqual({
        ok: false,
        refusal: { kind: 'conflict', currentVersion: 1 },
      });
      expect((await config.snapshot('app')).entries[0]?.value).toEqual({ keywords: ['time'] });
      // Ten editors of version 1 at once: exactly one wins.
      const racing = await Promise.all(
        Array.from({ length: 10 }, (_, index) =>
          config.write('app', change('clock', { keywords: [`k${index}`] }, { expectedVersion: 1 }), LIMITS),
        ),
      );
      expect(racing.filter((result) => result.ok)).toHaveLength(1);
      expect((await config.history('app', 'keywords', 'clock')).map((entry) => entry.version)).toEqual([
        2, 1,
      ]);
    });

    it('keeps the last versions of an item, newest first, with its deletion as a version of its own', async () => {
      const config = open();
      for (let index = 1; index <= 5; index += 1)
        await config.write('app', change('clock', { keywords: [`v${index}`] }), LIMITS);
      const deleted = await config.write('app', change('clock', undefined, { comment: 'gone' }), LIMITS);
      expect(deleted).toMatchObject({ ok: true, entry: { version: 6, deleted: true, comment: 'gone' } });
      const history = await config.history('app', 'keywords', 'clock');
      expect(history.map((entry) => entry.version)).toEqual([6, 5, 4, 3]);
      expect(history[1]?.value).toEqual({ keywords: ['v5'] });
      expect(await config.snapshot('app')).toEqual({ version: 6, entries: [] });
      expect(await config.write('app', change('clock', undefined), LIMITS)).toEqual({
        ok: false,
        refusal: { kind: 'not_found' },
      });
      // A deleted item's version is its deletion's: a compare-and-set against it brings it back.
      expect(
        await config.write('app', change('clock', { keywords: ['back'] }, { expectedVersion: 6 }), LIMITS),
      ).toMatchObject({
        ok: true,
        entry: { version: 7 },
      });
    });

    it('refuses an item past the scope limit, but not a change of an existing one', async () => {
      const config = open();
      for (const name of ['a', 'b', 'c'])
        await config.write('app', change(name, { keywords: [name] }), LIMITS);
      expect(await config.write('app', change('d', { keywords: ['d'] }), LIMITS)).toEqual({
        ok: false,
        refusal: { kind: 'too_many_items', limit: 3 },
      });
      expect((await config.write('app', change('a', { keywords: ['again'] }), LIMITS)).ok).toBe(true);
      expect((await config.snapshot('app')).version).toBe(4);
    });

    it('tells its listeners of every change, with the scope and its new version', async () => {
      const config = open();
      const heard: string[] = [];
      const stop = config.onChange((scope, version) => heard.push(`${scope}@${version}`));
      // A subscription of a shared store may take a moment to be in place.
      await new Promise((resolve) => setTimeout(resolve, 50));
      await config.write('tenant:a', change('clock', { keywords: ['time'] }), LIMITS);
      await config.write('app', change('clock', { keywords: ['time'] }), LIMITS);
      for (let waited = 0; heard.length < 2 && waited < 2_000; waited += 10)
        await new Promise((resolve) => setTimeout(resolve, 10));
      stop();
      expect(heard).toEqual(['tenant:a@1', 'app@1']);
    });
  });
}
