import { describe, expect, it } from 'vitest';
import { type BudgetCounters, InMemoryBudgetCounters } from '../../src/budgets/budget-counters.js';
import { RedisBudgetCounters } from '../../src/budgets/redis-budget-counters.js';
import { REDIS_URL, useRedis } from '../support/redis.js';

const redis = useRedis();
const HOUR = 3_600_000;

const implementations: Array<[string, () => BudgetCounters]> = [
  ['in memory', () => new InMemoryBudgetCounters()],
  ['Redis', () => new RedisBudgetCounters(REDIS_URL, { keyPrefix: redis.prefix() })],
];

describe.each(implementations)('budget counters (%s)', (_name, make) => {
  it('adds to every counter of a charge, or to none when one would pass a limit', async () => {
    const counters = make();
    try {
      const amounts = { inputTokens: 400, outputTokens: 100, nanoCost: 7 };
      const entries = [
        { name: 'session:s1:day:2026-11-29', ttlMs: HOUR, amounts, limits: { totalTokens: 10_000 } },
        { name: 'day:2026-11-29', ttlMs: HOUR, amounts, limits: { totalTokens: 1000 } },
      ];
      expect(await counters.charge('acme', entries)).toEqual({ ok: true });
      expect(await counters.charge('acme', entries)).toEqual({ ok: true });
      // A third would take the day to 1,500: refused by the second counter, and the first keeps what it had.
      expect(await counters.charge('acme', entries)).toEqual({
        ok: false,
        index: 1,
        limit: 'totalTokens',
        used: { inputTokens: 800, outputTokens: 200, nanoCost: 14 },
      });
      expect(
        await counters.read('acme', ['session:s1:day:2026-11-29', 'day:2026-11-29', 'day:2026-11-30']),
      ).toEqual([
        { inputTokens: 800, outputTokens: 200, nanoCost: 14 },
        { inputTokens: 800, outputTokens: 200, nanoCost: 14 },
        { inputTokens: 0, outputTokens: 0, nanoCost: 0 },
      ]);
      // Another tenant's counter of the same name is its own.
      expect(await counters.read('globex', ['day:2026-11-29'])).toEqual([
        { inputTokens: 0, outputTokens: 0, nanoCost: 0 },
      ]);
      // A reservation given back (negative amounts) is added without a check.
      await counters.add('acme', [
        {
          name: 'day:2026-11-29',
          ttlMs: HOUR,
          amounts: { inputTokens: -300, outputTokens: -50, nanoCost: -4 },
        },
      ]);
      expect(await counters.read('acme', ['day:2026-11-29'])).toEqual([
        { inputTokens: 500, outputTokens: 150, nanoCost: 10 },
      ]);
    } finally {
      await counters.close?.();
    }
  });

  it('checks each limit kind: input, output, total and cost', async () => {
    const counters = make();
    try {
      const amounts = { inputTokens: 10, outputTokens: 20, nanoCost: 30 };
      const refusedBy = async (limits: Record<string, number>) => {
        const result = await counters.charge('t', [
          { name: `x:${Object.keys(limits)[0]}`, ttlMs: HOUR, amounts, limits },
        ]);
        return result.ok ? undefined : result.limit;
      };
      expect(await refusedBy({ inputTokens: 9 })).toBe('inputTokens');
      expect(await refusedBy({ outputTokens: 19 })).toBe('outputTokens');
      expect(await refusedBy({ totalTokens: 29 })).toBe('totalTokens');
      expect(await refusedBy({ nanoCost: 29 })).toBe('nanoCost');
      expect(await refusedBy({ totalTokens: 30 })).toBeUndefined();
    } finally {
      await counters.close?.();
    }
  });
});

describe('Redis budget counters', () => {
  it('keep a tenant’s counters under one hash tag, expiring after their period', async () => {
    const prefix = redis.prefix();
    const counters = new RedisBudgetCounters(REDIS_URL, { keyPrefix: prefix });
    try {
      const amounts = { inputTokens: 1, outputTokens: 1, nanoCost: 0 };
      await counters.charge('', [
        { name: 'session:s1:day:2026-11-29', ttlMs: 2 * HOUR, amounts, limits: { totalTokens: 10 } },
        { name: 'day:2026-11-29', ttlMs: 2 * HOUR, amounts },
      ]);
      const keys = (await redis.keys(prefix)).sort();
      expect(keys).toEqual([
        `${prefix}budget:{t.}:day:2026-11-29`,
        `${prefix}budget:{t.}:session:s1:day:2026-11-29`,
      ]);
      for (const key of keys) {
        const ttl = await redis.admin.pttl(key);
        expect(ttl).toBeGreaterThan(HOUR);
        expect(ttl).toBeLessThanOrEqual(2 * HOUR);
      }
    } finally {
      await counters.close();
    }
  });
});
