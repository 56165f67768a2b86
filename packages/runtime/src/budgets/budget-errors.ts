import { SystemError } from '@switchboard/core';
import type { BudgetScope, LimitName } from './budget-options.js';

/** What {@link BudgetExceededError} says about the limit. */
export interface BudgetExceededDetails {
  /** Where the limit applies: this turn, its session's period, its tenant's day or month. */
  scope: BudgetScope;
  /** Which limit. */
  limit: LimitName;
  /** The limit's value (tokens, or cost in the price table's currency). */
  max: number;
  /** What was spent (or reserved by calls in flight) before the refused call. */
  used: number;
  /** The most the refused call might have spent, by the estimate before it. */
  requested: number;
}

/**
 * A model call was not made because it could have taken a budget past its
 * limit (see `BudgetOptions`): the turn ends with status `budget_exceeded`.
 */
export class BudgetExceededError extends SystemError {
  readonly code = 'budget_exceeded';
  readonly scope: BudgetScope;
  readonly limit: LimitName;
  readonly max: number;
  readonly used: number;
  readonly requested: number;

  constructor({ scope, limit, max, used, requested }: BudgetExceededDetails) {
    super({
      message: `The ${scope} budget's ${limit} limit of ${max} would be passed: ${used} spent, the next model call may take ${requested}`,
    });
    this.scope = scope;
    this.limit = limit;
    this.max = max;
    this.used = used;
    this.requested = requested;
  }
}
