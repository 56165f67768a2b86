import type { Meter } from '@opentelemetry/api';
import type { Logger } from '../logging/logger.js';
import { type BudgetCounters, InMemoryBudgetCounters } from './budget-counters.js';
import { BudgetMetrics } from './budget-metrics.js';
import type { BudgetOptions } from './budget-options.js';
import { BudgetRules } from './budget-rules.js';
import { Budgets } from './budgets.js';

/**
 * An app's {@link Budgets}, made when it mounts its orchestrator: undefined
 * without `budgets` (then nothing on the turn path looks at them). The
 * counters are the app's `budgetCounters` (`createRedisStores` gives ones
 * every replica shares), else this process's own.
 */
export function appBudgets(
  options: BudgetOptions | undefined,
  counters: BudgetCounters | undefined,
  { logger, meter, appName }: { logger: Logger; meter: Meter | undefined; appName: string },
): Budgets | undefined {
  if (options === undefined) return undefined;
  const metrics = meter ? new BudgetMetrics(meter, { app: appName }) : undefined;
  return new Budgets(new BudgetRules(options, counters ?? new InMemoryBudgetCounters(), { logger, metrics }));
}
