import { ConfigurationError } from '@switchboard/core';

/**
 * Limits on what model calls may spend: tokens and estimated cost. Each is
 * optional; a limit that is not set is not checked.
 */
export interface BudgetLimits {
  /** Input (prompt) tokens. */
  inputTokens?: number;
  /** Output (completion) tokens. */
  outputTokens?: number;
  /** Input and output tokens together. */
  totalTokens?: number;
  /** Estimated cost, in the currency of {@link BudgetOptions.prices} (say, US dollars). */
  cost?: number;
}

/** How long a session's or tenant's budget runs before it starts afresh (UTC calendar periods). */
export type BudgetPeriod = 'hour' | 'day' | 'month';

/** What a model costs per million tokens, in the operator's currency. */
export interface ModelPrice {
  /** Per million input (prompt) tokens. */
  input: number;
  /** Per million output (completion) tokens. */
  output: number;
}

/**
 * Spending limits for model calls (see `docs/guides/budgets.md`). Every model call
 * that goes through Switchboard's model-call helpers (`llmAgent`, the LLM
 * routers, retrieval summaries, `chargeModelCall` in your own code) is
 * checked before it is sent with the most it may cost (its estimated input
 * tokens plus its `max_tokens`), and counted after with the usage the model
 * reported. A turn whose next call would pass a limit ends with status
 * `budget_exceeded`.
 *
 * @example
 * ```ts
 * new App({
 *   name: 'desk',
 *   agents,
 *   budgets: {
 *     turn: { totalTokens: 20_000 },
 *     session: { period: 'day', totalTokens: 200_000 },
 *     tenant: { day: { cost: 5 }, month: { cost: 100 } },
 *     prices: { 'gpt-4o-mini': { input: 0.15, output: 0.6 } },
 *   },
 * });
 * ```
 */
export interface BudgetOptions {
  /** Limits for one turn (counted in the process that runs it). */
  turn?: BudgetLimits;
  /** Limits for one session over a period (default `day`), shared by every replica. */
  session?: BudgetLimits & { period?: BudgetPeriod };
  /** Limits for a tenant (the key's tenant; the whole app without auth) per UTC day and per UTC month. */
  tenant?: { day?: BudgetLimits; month?: BudgetLimits };
  /**
   * Prices per model name, per million tokens. A model not listed costs the
   * `'*'` entry's price if there is one, else nothing (a warning is logged
   * once per model when a cost limit is set).
   */
  prices?: Readonly<Record<string, ModelPrice>>;
  /**
   * Output tokens a call that sets no `max_tokens` (or
   * `max_completion_tokens`) is assumed to spend at most, for the check
   * before it (default 4 096). The count after it is what the model reported.
   */
  defaultMaxOutputTokens?: number;
  /** The clock the periods follow, in ms since the epoch (default `Date.now`; tests inject their own). */
  now?: () => number;
}

/** The limit names of {@link BudgetLimits}. */
export const LIMIT_NAMES = ['inputTokens', 'outputTokens', 'totalTokens', 'cost'] as const;

/** One of {@link LIMIT_NAMES}. */
export type LimitName = (typeof LIMIT_NAMES)[number];

/** Where a limit applies. */
export type BudgetScope = 'turn' | 'session' | 'tenant-day' | 'tenant-month';

const PERIODS = new Set<string>(['hour', 'day', 'month']);

function checkLimits(where: string, limits: unknown, extra: readonly string[] = []): void {
  if (limits === undefined) return;
  if (typeof limits !== 'object' || limits === null || Array.isArray(limits))
    throw new ConfigurationError({ message: `budgets.${where} must be an object of limits` });
  for (const [key, value] of Object.entries(limits)) {
    if (extra.includes(key)) continue;
    if (!(LIMIT_NAMES as readonly string[]).includes(key))
      throw new ConfigurationError({
        message: `budgets.${where}.${key} is not a limit; use ${LIMIT_NAMES.join(', ')}`,
      });
    if (value === undefined) continue;
    const whole = key !== 'cost';
    if (
      typeof value !== 'number' ||
      !Number.isFinite(value) ||
      value <= 0 ||
      (whole && !Number.isInteger(value))
    )
      throw new ConfigurationError({
        message: `budgets.${where}.${key} must be a positive ${whole ? 'whole number of tokens' : 'number'}, got ${String(value)}`,
      });
  }
}

function hasCost(limits: BudgetLimits | undefined): boolean {
  return limits?.cost !== undefined;
}

/**
 * Checks budget options when the app is made, so that a typo fails the start
 * rather than letting a turn spend without a limit.
 * @throws ConfigurationError naming the bad option.
 */
export function checkBudgetOptions(options: BudgetOptions): void {
  if (typeof options !== 'object' || options === null)
    throw new ConfigurationError({ message: 'budgets must be an object' });
  const known = new Set(['turn', 'session', 'tenant', 'prices', 'defaultMaxOutputTokens', 'now']);
  for (const key of Object.keys(options))
    if (!known.has(key))
      throw new ConfigurationError({
        message: `budgets.${key} is not an option; use ${[...known].join(', ')}`,
      });
  checkLimits('turn', options.turn);
  checkLimits('session', options.session, ['period']);
  const period = options.session?.period;
  if (period !== undefined && !PERIODS.has(period))
    throw new ConfigurationError({
      message: `budgets.session.period must be 'hour', 'day' or 'month', got ${String(period)}`,
    });
  const { tenant } = options;
  if (tenant !== undefined) {
    if (typeof tenant !== 'object' || tenant === null)
      throw new ConfigurationError({ message: 'budgets.tenant must be { day?, month? }' });
    for (const key of Object.keys(tenant))
      if (key !== 'day' && key !== 'month')
        throw new ConfigurationError({ message: `budgets.tenant.${key} is not a period; use day, month` });
    checkLimits('tenant.day', tenant.day);
    checkLimits('tenant.month', tenant.month);
  }
  for (const [model, price] of Object.entries(options.prices ?? {})) {
    for (const side of ['input', 'output'] as const) {
      const value = (price as Partial<ModelPrice> | undefined)?.[side];
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
        throw new ConfigurationError({
          message: `budgets.prices['${model}'].${side} must be a price per million tokens (a number of at least 0)`,
        });
    }
  }
  const costLimited =
    hasCost(options.turn) || hasCost(options.session) || hasCost(tenant?.day) || hasCost(tenant?.month);
  if (costLimited && Object.keys(options.prices ?? {}).length === 0)
    throw new ConfigurationError({
      message: 'budgets: a cost limit needs a price table (budgets.prices, per million tokens per model)',
    });
  const { defaultMaxOutputTokens } = options;
  if (
    defaultMaxOutputTokens !== undefined &&
    (!Number.isInteger(defaultMaxOutputTokens) || defaultMaxOutputTokens <= 0)
  )
    throw new ConfigurationError({
      message: `budgets.defaultMaxOutputTokens must be a positive whole number, got ${String(defaultMaxOutputTokens)}`,
    });
  if (options.now !== undefined && typeof options.now !== 'function')
    throw new ConfigurationError({ message: 'budgets.now must be a function returning ms since the epoch' });
}
