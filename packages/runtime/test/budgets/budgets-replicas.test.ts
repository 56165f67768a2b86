import { describe, expect, it } from 'vitest';
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
