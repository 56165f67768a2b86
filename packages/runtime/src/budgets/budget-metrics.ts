import type { Attributes, Counter, Meter } from '@opentelemetry/api';
import type { Spend } from './budget-counters.js';
import { NANO } from './budget-counters.js';

/**
 * What model calls spent and which budgets refused them, per tenant (an
 * attribute only with auth; tenants are the operator's, so few): the
 * Prometheus series `switchboard_model_tokens_total{kind}`,
 * `switchboard_model_cost_total` and `switchboard_budget_exceeded_total{scope,limit}`.
 */
export class BudgetMetrics {
  readonly #tokens: Counter;
  readonly #cost: Counter;
  readonly #exceeded: Counter;
  readonly #base: Attributes;

  constructor(meter: Meter, base: Attributes) {
    this.#base = base;
    this.#tokens = meter.createCounter('switchboard.model.tokens', {
      description: 'Tokens model calls spent (as the models reported them), by kind (input, output)',
      unit: '{token}',
    });
    this.#cost = meter.createCounter('switchboard.model.cost', {
      description: 'Estimated cost of model calls, from the budgets price table (its currency)',
    });
    this.#exceeded = meter.createCounter('switchboard.budget.exceeded', {
      description: 'Model calls refused because a budget would have been passed, by scope and limit',
      unit: '{call}',
    });
  }

  /** Counts what one model call spent. */
  spent(tenant: string, spend: Spend): void {
    const attributes = tenant === '' ? this.#base : { ...this.#base, tenant };
    if (spend.inputTokens > 0) this.#tokens.add(spend.inputTokens, { ...attributes, kind: 'input' });
    if (spend.outputTokens > 0) this.#tokens.add(spend.outputTokens, { ...attributes, kind: 'output' });
    if (spend.nanoCost > 0) this.#cost.add(spend.nanoCost / NANO, attributes);
  }

  /** Counts a refused model call. */
  exceeded(tenant: string, scope: string, limit: string): void {
    const attributes = tenant === '' ? this.#base : { ...this.#base, tenant };
    this.#exceeded.add(1, { ...attributes, scope, limit });
  }
}
