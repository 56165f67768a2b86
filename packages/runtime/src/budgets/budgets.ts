import type { RequestContext, TokenUsage } from '@switchboard/core';
import { NANO, type Spend } from './budget-counters.js';
import type { BudgetExceededError } from './budget-errors.js';
import type { BudgetLimits, BudgetPeriod } from './budget-options.js';
import { periodAt } from './budget-periods.js';
import { type BudgetRules, sessionCounter } from './budget-rules.js';
import { TurnBudget } from './turn-budget.js';

/** Spending in a report: tokens and estimated cost. */
export interface UsageAmounts {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /** In the price table's currency. */
  cost: number;
}

/** One period's spending against its limits. */
export interface PeriodUsage {
  /** The period: `2026-11-29` (day), `2026-11` (month), `2026-11-29T13` (hour), UTC. */
  period: string;
  /** When the counters start afresh (ISO 8601). */
  resetsAt: string;
  used: UsageAmounts;
  /** The limits set for it, if any. */
  limits?: BudgetLimits;
  /** What is left under each limit set (never below 0). */
  remaining?: BudgetLimits;
}

/** What `GET /v1/usage` answers: a tenant's spending (and a session's) against the budgets. */
export interface UsageReport {
  /** The caller's tenant (`null` without auth: the whole app). */
  tenantId: string | null;
  /** The tenant's totals (left out for a key bound to one user). */
  tenant?: { day: PeriodUsage; month: PeriodUsage };
  session?: PeriodUsage & { sessionId: string; periodKind: BudgetPeriod };
  /** The limits of each turn, if set (a turn's spending is on its record: `usage`). */
  turnLimits?: BudgetLimits;
}

function amountsOf(spend: Spend): UsageAmounts {
  return {
    inputTokens: spend.inputTokens,
    outputTokens: spend.outputTokens,
    totalTokens: spend.inputTokens + spend.outputTokens,
    cost: spend.nanoCost / NANO,
  };
}

function periodUsage(
  id: string,
  endsAt: number,
  spend: Spend,
  limits: BudgetLimits | undefined,
): PeriodUsage {
  const used = amountsOf(spend);
  const usage: PeriodUsage = { period: id, resetsAt: new Date(endsAt).toISOString(), used };
  if (limits) {
    const { inputTokens, outputTokens, totalTokens, cost } = limits;
    usage.limits = Object.fromEntries(Object.entries(limits).filter(([key]) => key !== 'period'));
    const remaining: BudgetLimits = {};
    if (inputTokens !== undefined) remaining.inputTokens = Math.max(0, inputTokens - used.inputTokens);
    if (outputTokens !== undefined) remaining.outputTokens = Math.max(0, outputTokens - used.outputTokens);
    if (totalTokens !== undefined) remaining.totalTokens = Math.max(0, totalTokens - used.totalTokens);
    if (cost !== undefined) remaining.cost = Math.max(0, cost - used.cost);
    usage.remaining = remaining;
  }
  return usage;
}

/**
 * An app's budgets (see `BudgetOptions`): made once, they meter each turn
 * part ({@link Budgets.attach}) and report spending ({@link Budgets.report}).
 */
export class Budgets {
  readonly #rules: BudgetRules;

  constructor(rules: BudgetRules) {
    this.#rules = rules;
  }

  /**
   * Meters the model calls of a turn part made under `context`: `earlier`
   * is what the turn spent before (a part resumed after an approval), and
   * `stop` ends the turn when a call is refused. Costs no store call.
   */
  attach(
    context: RequestContext,
    earlier: TokenUsage | undefined,
    stop: (error: BudgetExceededError) => void,
  ): TurnBudget {
    const owner = { tenant: context.tenantId ?? '', sessionId: context.sessionId };
    const budget = new TurnBudget(this.#rules, owner, earlier, stop);
    budget.register(context);
    return budget;
  }

  /**
   * A tenant's spending this day and month (unless `tenantTotals` is false)
   * and, with `sessionId`, that session's this period: one store call.
   */
  async report(tenantId: string | undefined, sessionId?: string, tenantTotals = true): Promise<UsageReport> {
    const rules = this.#rules;
    const now = rules.now();
    const day = periodAt('day', now);
    const month = periodAt('month', now);
    const session = periodAt(rules.sessionPeriod, now);
    const names = [`day:${day.id}`, `month:${month.id}`];
    if (sessionId !== undefined) names.push(sessionCounter(sessionId, rules.sessionPeriod, session.id));
    const [daySpend, monthSpend, sessionSpend] = await rules.counters.read(tenantId ?? '', names);
    const { options } = rules;
    const report: UsageReport = { tenantId: tenantId ?? null };
    if (tenantTotals)
      report.tenant = {
        day: periodUsage(day.id, day.endsAt, daySpend as Spend, options.tenant?.day),
        month: periodUsage(month.id, month.endsAt, monthSpend as Spend, options.tenant?.month),
      };
    if (sessionId !== undefined) {
      const { period: _period, ...limits } = options.session ?? {};
      report.session = {
        sessionId,
        periodKind: rules.sessionPeriod,
        ...periodUsage(
          session.id,
          session.endsAt,
          sessionSpend as Spend,
          options.session ? (limits as BudgetLimits) : undefined,
        ),
      };
    }
    if (options.turn) report.turnLimits = { ...options.turn };
    return report;
  }
}
