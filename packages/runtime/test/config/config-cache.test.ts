import type { ConfigView } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { ConfigCache } from '../../src/config/config-cache.js';
import type {
  ConfigChange,
  ConfigScope,
  ConfigSnapshot,
  ConfigStore,
} from '../../src/config/config-store.js';
import { InMemoryConfigStore } from '../../src/config/in-memory-config-store.js';

const LIMITS = { maxItemsPerScope: 10, maxVersionsKept: 5 };
const keywords = (name: string, words: string[]): ConfigChange => ({
  type: 'keywords',
  name,
  value: { keywords: words },
  updatedAt: new Date().toISOString(),
});

/**
 * A store that answers like a remote one (a promise), counts its reads,
 * and relays change notifications only while `deliver` is on, as a
 * subscription that dropped would not; `resync()` says it came back.
 */
class FlakyStore implements ConfigStore {
  readonly specificationVersion = 'v1' as const;
  readonly inner = new InMemoryConfigStore();
  reads = 0;
  deliver = true;
  readonly #changes = new Set<(scope: ConfigScope, version: number) => void>();
  readonly #resyncs = new Set<() => void>();
  constructor() {
    this.inner.onChange((scope, version) => {
      if (this.deliver) for (const listener of this.#changes) listener(scope, version);
    });
  }
  async snapshot(scope: ConfigScope): Promise<ConfigSnapshot> {
    this.reads += 1;
    return this.inner.snapshot(scope);
  }
  history(scope: ConfigScope, type: string, name: string) {
    return this.inner.history(scope, type, name);
  }
  write(scope: ConfigScope, change: ConfigChange) {
    return this.inner.write(scope, change, LIMITS);
  }
  onChange(listener: (scope: ConfigScope, version: number) => void) {
    this.#changes.add(listener);
    return () => this.#changes.delete(listener);
  }
  onResync(listener: () => void) {
    this.#resyncs.add(listener);
    return () => this.#resyncs.delete(listener);
  }
  resync() {
    for (const listener of this.#resyncs) listener();
  }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('the per-replica config cache', () => {
  it('answers a warm turn at once, with the same view and no store read', async () => {
    const store = new FlakyStore();
    const cache = new ConfigCache(store);
    await store.write('app', keywords('clock', ['time']));
    const first = (await cache.viewOf('acme')) as ConfigView;
    const reads = store.reads;
    for (let turn = 0; turn < 100; turn += 1) expect(cache.viewOf('acme')).toBe(first);
    expect(store.reads).toBe(reads);
    expect(first.get('keywords', 'clock')).toEqual({ keywords: ['time'] });
    cache.close();
  });

  it('waits for the reload a change announced, so the next turn never sees the older items', async () => {
    const store = new FlakyStore();
    const cache = new ConfigCache(store);
    await cache.viewOf(undefined);
    await store.write('app', keywords('clock', ['time']));
    const next = cache.viewOf(undefined);
    // Announced, reloading: the turn waits rather than run on version 0.
    expect((await next).version).toEqual({ app: 1 });
    cache.close();
  });

  it('reloads every cached scope when the subscription comes back, after missing a change', async () => {
    const store = new FlakyStore();
    const cache = new ConfigCache(store);
    await cache.viewOf('acme');
    store.deliver = false;
    await store.write('tenant:acme', keywords('clock', ['agenda']));
    // The notification was lost: the cache still answers what it had.
    expect((cache.viewOf('acme') as ConfigView).version).toEqual({ app: 0, tenant: 0 });
    store.deliver = true;
    store.resync();
    await settle();
    expect((cache.viewOf('acme') as ConfigView).version).toEqual({ app: 0, tenant: 1 });
    cache.close();
  });

  it('past its age, answers with what it has and reloads in the background', async () => {
    const store = new FlakyStore();
    const cache = new ConfigCache(store, { maxAgeMs: 0 });
    await cache.viewOf(undefined);
    store.deliver = false;
    await store.write('app', keywords('clock', ['time']));
    await settle();
    expect((cache.viewOf(undefined) as ConfigView).version).toEqual({ app: 0 });
    await settle();
    expect((cache.viewOf(undefined) as ConfigView).version).toEqual({ app: 1 });
    cache.close();
  });

  it('skips a stored item its schema no longer accepts, keeping the others', async () => {
    const store = new FlakyStore();
    const cache = new ConfigCache(store);
    await store.write('app', keywords('clock', ['time']));
    await store.write('app', { ...keywords('echo', []), value: { keywords: 'not a list' } });
    const view = (await cache.viewOf(undefined)) as ConfigView;
    expect([...view.items('keywords').keys()]).toEqual(['clock']);
    cache.close();
  });
});
