import type { Awaitable } from '../stores/session-store.js';

/**
 * What model calls spent: tokens, and cost in nano-units of the price
 * table's currency (whole numbers, so that Redis adds them exactly).
 */
export interface Spend {
  inputTokens: number;
  outputTokens: number;
  /** Cost × 10⁹ (see {@link NANO}). */
  nanoCost: number;
}

/** Cost units per currency unit in counters. */
export const NANO = 1_000_000_000;

/** Limits in counter units; absent ones are not checked. */
export interface SpendLimits {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  nanoCost?: number;
}

/** One counter of a tenant, with what to add to it and the limits it must stay within. */
export interface CounterEntry {
  /** The counter within its tenant: `day:2026-11-29`, `session:<id>:day:2026-11-29`. */
  name: string;
  /** How long the counter lives once created (ms): to its period's end and a little more. */
  ttlMs: number;
  amounts: Spend;
  limits?: SpendLimits;
}

/** What a charge answered: added everywhere, or refused by the first counter that would pass a limit. */
export type ChargeResult = { ok: true } | { ok: false; index: number; limit: keyof SpendLimits; used: Spend };

/**
 * Where budget counters live: one process ({@link InMemoryBudgetCounters})
 * or Redis, shared by every replica (`RedisBudgetCounters` from
 * `@switchboard/runtime/redis`). A tenant's counters live together (one
 * Redis hash tag), so a charge to several of them is one atomic step.
 */
export interface BudgetCounters {
  /**
   * Adds every entry's amounts, unless one of them would pass a limit: then
   * nothing is added and the result names the counter and limit.
   */
  charge(tenant: string, entries: readonly CounterEntry[]): Awaitable<ChargeResult>;
  /** Adds amounts (negative ones too: a reservation given back) without checking limits. */
  add(tenant: string, entries: readonly CounterEntry[]): Awaitable<void>;
  /** What each named counter holds now (zeros for one that does not exist). */
  read(tenant: string, names: readonly string[]): Awaitable<Spend[]>;
  close?(): Awaitable<void>;
}

/** Nothing spent. */
export function noSpend(): Spend {
  return { inputTokens: 0, outputTokens: 0, nanoCost: 0 };
}

/** The first limit `used` plus `amounts` would pass, if any. */
export function passedLimit(used: Spend, amounts: Spend, limits: SpendLimits): keyof SpendLimits | undefined {
  const input = used.inputTokens + amounts.inputTokens;
  const output = used.outputTokens + amounts.outputTokens;
  if (limits.inputTokens !== undefined && input > limits.inputTokens) return 'inputTokens';
  if (limits.outputTokens !== undefined && output > limits.outputTokens) return 'outputTokens';
  if (limits.totalTokens !== undefined && input + output > limits.totalTokens) return 'totalTokens';
  if (limits.nanoCost !== undefined && used.nanoCost + amounts.nanoCost > limits.nanoCost) return 'nanoCost';
  return undefined;
}

/** Counters kept at most; the ones expiring first are dropped past this. */
const MAX_COUNTERS = 100_000;

/** {@link BudgetCounters} for one process: counters expire with their period. */
export class InMemoryBudgetCounters implements BudgetCounters {
  readonly #counters = new Map<string, Spend & { expiresAt: number }>();

  charge(tenant: string, entries: readonly CounterEntry[]): ChargeResult {
    for (let index = 0; index < entries.length; index += 1) {
      const entry = entries[index] as CounterEntry;
      if (!entry.limits) continue;
      const used = this.#current(tenant, entry.name);
      const limit = passedLimit(used, entry.amounts, entry.limits);
      if (limit) return { ok: false, index, limit, used: { ...used } };
    }
    this.add(tenant, entries);
    return { ok: true };
  }

  add(tenant: string, entries: readonly CounterEntry[]): void {
    for (const entry of entries) {
      const key = `${tenant}\n${entry.name}`;
      let counter = this.#live(key);
      if (!counter) {
        counter = { ...noSpend(), expiresAt: Date.now() + entry.ttlMs };
        this.#counters.set(key, counter);
        if (this.#counters.size > MAX_COUNTERS)
          this.#counters.delete(this.#counters.keys().next().value as string);
      }
      counter.inputTokens += entry.amounts.inputTokens;
      counter.outputTokens += entry.amounts.outputTokens;
      counter.nanoCost += entry.amounts.nanoCost;
    }
  }

  read(tenant: string, names: readonly string[]): Spend[] {
    return names.map((name) => ({ ...this.#current(tenant, name) }));
  }

  #current(tenant: string, name: string): Spend {
    const counter = this.#live(`${tenant}\n${name}`);
    return counter
      ? { inputTokens: counter.inputTokens, outputTokens: counter.outputTokens, nanoCost: counter.nanoCost }
      : noSpend();
  }

  #live(key: string): (Spend & { expiresAt: number }) | undefined {
    const counter = this.#counters.get(key);
    if (counter && counter.expiresAt <= Date.now()) {
      this.#counters.delete(key);
      return undefined;
    }
    return counter;
  }
}
