import { describe, expect, it } from 'vitest';
import type { BudgetCounters } from '../../src/budgets/budget-counters.js';
import { RedisBudgetCounters } from '../../src/budgets/redis-budget-counters.js';
import { createRedisStores } from '../../src/redis.js';
import { REDIS_URL, useRedis } from '../support/redis.js';
import { budgetApp, spending } from './budget-fixtures.js';

const redis = useRedis();

describe('budgets across replicas (two apps sharing one Redis prefix)', () => {
  it('stops turns on replica B once the tenant’s daily budget was spent on replica A', async () => {
    const keyPrefix = redis.prefix();
    const budgets = { tenant: { day: { totalTokens: 1000 } } };
    const a = await budgetApp([spending('From A.', 600, 100)], {
      drafts: 1,
      budgets,
      ...createRedisStores(REDIS_URL, { keyPrefix }),
    });
    const b = await budgetApp([spending('From B.', 600, 100)], {
      drafts: 1,
      budgets,
      ...createRedisStores(REDIS_URL, { keyPrefix }),
    });
    try {
      expect((await a.app.chat({ message: 'on A' })).status).toBe('completed');
      const onB = await b.app.chat({ message: 'on B' });
      expect(onB.status).toBe('budget_exceeded');
      expect(onB.steps.find((step) => step.label === 'budget')?.annotations).toMatchObject({
        scope: 'tenant-day',
        used: 700,
      });
      expect(b.server.requests).toHaveLength(0);
      const usage = (await (await b.app.request('/v1/usage')).json()) as {
        tenant: { day: { used: { totalTokens: number }; remaining: { totalTokens: number } } };
      };
      expect(usage.tenant.day.used.totalTokens).toBe(700);
      expect(usage.tenant.day.remaining.totalTokens).toBe(300);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('stores a budget_exceeded turn as a v2 record, which a replica of the previous version refuses to read', async () => {
    const keyPrefix = redis.prefix();
    const { app, close } = await budgetApp([spending('Draft.', 600, 100)], {
      budgets: { turn: { totalTokens: 1000 } },
      // As during a rolling upgrade: records the previous version can read wherever they can be.
      ...createRedisStores(REDIS_URL, { keyPrefix, compactRecords: false }),
    });
    try {
      const result = await app.chat({ sessionId: 'over', message: 'two drafts' });
      expect(result.status).toBe('budget_exceeded');
      const record = await redis.admin.lindex(`${keyPrefix}session:{over}:turns`, -1);
      expect(record).toMatch(/^\{"v":2,"s":"budget_exceeded","turn":\{/);
    } finally {
      await close();
    }
  });
});

/** The counters with a tally of their calls (what a turn costs in store calls). */
function counted(counters: BudgetCounters) {
  const calls = { charge: 0, add: 0 };
  const proxy: BudgetCounters = {
    charge: (tenant, entries) => {
      calls.charge += 1;
      return counters.charge(tenant, entries);
    },
    add: (tenant, entries) => {
      calls.add += 1;
      return counters.add(tenant, entries);
    },
    read: (tenant, names) => counters.read(tenant, names),
    close: () => counters.close?.(),
  };
  return { calls, proxy };
}

describe('what budgets cost a turn in Redis calls', () => {
  it('none without budgets, none awaited with turn limits only, one charge per model call with tenant limits', async () => {
    const run = async (
      budgets: object | undefined,
      calls: { charge: number; add: number },
      proxy: BudgetCounters,
    ) => {
      const stores = createRedisStores(REDIS_URL, { keyPrefix: redis.prefix() });
      const { app, close } = await budgetApp([spending('One.', 60, 10), spending('Two.', 60, 10)], {
        ...stores,
        budgetCounters: proxy,
        ...(budgets ? { budgets } : {}),
      });
      try {
        expect((await app.chat({ message: 'two drafts' })).status).toBe('completed');
        return { ...calls };
      } finally {
        await close();
        // Its own counters are replaced by the tallied ones: closed here, so that the shared client is quit.
        await stores.budgetCounters.close();
      }
    };
    const none = counted(new RedisBudgetCounters(REDIS_URL, { keyPrefix: redis.prefix() }));
    expect(await run(undefined, none.calls, none.proxy)).toEqual({ charge: 0, add: 0 });
    const turnOnly = counted(new RedisBudgetCounters(REDIS_URL, { keyPrefix: redis.prefix() }));
    // Two model calls: each counted after it answered, without a check before it.
    expect(await run({ turn: { totalTokens: 5000 } }, turnOnly.calls, turnOnly.proxy)).toEqual({
      charge: 0,
      add: 2,
    });
    const tenant = counted(new RedisBudgetCounters(REDIS_URL, { keyPrefix: redis.prefix() }));
    expect(await run({ tenant: { day: { totalTokens: 5000 } } }, tenant.calls, tenant.proxy)).toEqual({
      charge: 2,
      add: 2,
    });
  });
});
