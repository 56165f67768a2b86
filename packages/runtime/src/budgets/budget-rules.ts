import type { TokenUsage } from '@switchboard/core';
import type { Logger } from '../logging/logger.js';
import type { BudgetCounters, CounterEntry, Spend, SpendLimits } from './budget-counters.js';
import { NANO } from './budget-counters.js';
import type { BudgetMetrics } from './budget-metrics.js';
import type { BudgetLimits, BudgetOptions, BudgetPeriod, BudgetScope, ModelPrice } from './budget-options.js';
import { counterTtlMs, periodAt } from './budget-periods.js';

/** The shared counters of one model call's owner, in the order {@link BudgetRules.entries} gives them. */
export const SHARED_SCOPES: readonly BudgetScope[] = ['session', 'tenant-day', 'tenant-month'];

/** Who spends: the tenant ('' without auth) and the session. */
export interface SpendOwner {
  tenant: string;
  sessionId: string;
}

function unitsOf(limits: BudgetLimits | undefined): SpendLimits | undefined {
  if (!limits) return undefined;
  const units: SpendLimits = {};
  if (limits.inputTokens !== undefined) units.inputTokens = limits.inputTokens;
  if (limits.outputTokens !== undefined) units.outputTokens = limits.outputTokens;
  if (limits.totalTokens !== undefined) units.totalTokens = limits.totalTokens;
  if (limits.cost !== undefined) units.nanoCost = Math.round(limits.cost * NANO);
  return Object.keys(units).length > 0 ? units : undefined;
}

/** The session counter's name for a period: `session:<id>:day:2026-11-29`. */
export function sessionCounter(sessionId: string, period: BudgetPeriod, id: string): string {
  return `session:${sessionId}:${period}:${id}`;
}

/**
 * The budget options resolved once per app: limits in counter units, the
 * price table, the clock; and the arithmetic every model call needs.
 */
export class BudgetRules {
  readonly turn: SpendLimits | undefined;
  readonly session: SpendLimits | undefined;
  readonly sessionPeriod: BudgetPeriod;
  readonly tenantDay: SpendLimits | undefined;
  readonly tenantMonth: SpendLimits | undefined;
  /** True when a session or tenant limit is set: a call then waits for the shared counters' answer. */
  readonly checksShared: boolean;
  readonly defaultMaxOutputTokens: number;
  readonly now: () => number;
  readonly counters: BudgetCounters;
  readonly logger: Logger | undefined;
  readonly metrics: BudgetMetrics | undefined;
  /** The options as given (for reports). */
  readonly options: BudgetOptions;
  readonly #prices: ReadonlyMap<string, ModelPrice>;
  readonly #costLimited: boolean;
  readonly #unpriced = new Set<string>();

  constructor(
    options: BudgetOptions,
    counters: BudgetCounters,
    { logger, metrics }: { logger?: Logger; metrics?: BudgetMetrics } = {},
  ) {
    this.options = options;
    this.turn = unitsOf(options.turn);
    this.session = unitsOf(options.session);
    this.sessionPeriod = options.session?.period ?? 'day';
    this.tenantDay = unitsOf(options.tenant?.day);
    this.tenantMonth = unitsOf(options.tenant?.month);
    this.checksShared = !!(this.session || this.tenantDay || this.tenantMonth);
    this.defaultMaxOutputTokens = options.defaultMaxOutputTokens ?? 4096;
    this.now = options.now ?? Date.now;
    this.counters = counters;
    this.logger = logger;
    this.metrics = metrics;
    this.#prices = new Map(Object.entries(options.prices ?? {}));
    this.#costLimited = [this.turn, this.session, this.tenantDay, this.tenantMonth].some(
      (limits) => limits?.nanoCost !== undefined,
    );
  }

  /** What `inputTokens` in and `outputTokens` out of `model` cost, in nano-units (rounded up). */
  nanoCostOf(model: string, inputTokens: number, outputTokens: number): number {
    const price = this.#prices.get(model) ?? this.#prices.get('*');
    if (!price) {
      if (this.#costLimited && !this.#unpriced.has(model)) {
        this.#unpriced.add(model);
        this.logger?.warn(
          { model },
          `budgets: model '${model}' has no price (budgets.prices): its calls cost 0`,
        );
      }
      return 0;
    }
    // Prices are per million tokens: one token costs price / 10⁶ units, that is price × 10³ nano-units.
    return Math.ceil((inputTokens * price.input + outputTokens * price.output) * 1000);
  }

  /** What a model call spent by its reported usage. */
  spendOf(model: string, usage: TokenUsage): Spend {
    return {
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      nanoCost: this.nanoCostOf(model, usage.inputTokens, usage.outputTokens),
    };
  }

  /**
   * The shared counters one call's spending goes to (session, tenant day,
   * tenant month; see {@link SHARED_SCOPES}), with their limits when `checked`.
   */
  entries(owner: SpendOwner, amounts: Spend, checked: boolean): CounterEntry[] {
    const now = this.now();
    const session = periodAt(this.sessionPeriod, now);
    const day = periodAt('day', now);
    const month = periodAt('month', now);
    const entry = (name: string, ttlMs: number, limits: SpendLimits | undefined): CounterEntry =>
      checked && limits ? { name, ttlMs, amounts, limits } : { name, ttlMs, amounts };
    return [
      entry(
        sessionCounter(owner.sessionId, this.sessionPeriod, session.id),
        counterTtlMs(session, now),
        this.session,
      ),
      entry(`day:${day.id}`, counterTtlMs(day, now), this.tenantDay),
      entry(`month:${month.id}`, counterTtlMs(month, now), this.tenantMonth),
    ];
  }
}
