import { RequestContext, type TokenUsage } from '@switchboard/core';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { estimateRequestTokens } from '../agents/llm-token-estimate.js';
import { isPromiseLike } from '../promise-like.js';
import {
  type ChargeResult,
  type CounterEntry,
  NANO,
  noSpend,
  passedLimit,
  type Spend,
} from './budget-counters.js';
import { BudgetExceededError } from './budget-errors.js';
import type { BudgetScope, LimitName } from './budget-options.js';
import { type BudgetRules, SHARED_SCOPES, type SpendOwner } from './budget-rules.js';

/** A model call about to be made, as {@link chargeModelCall} needs it. */
export interface ModelCallCharge {
  model: string;
  messages: readonly ChatCompletionMessageParam[];
  tools?: readonly ChatCompletionTool[];
  /** The call's `max_tokens` (or `max_completion_tokens`), if it sets one. */
  maxOutputTokens?: number | null;
}

/** A model call the budgets let through: settle it with the usage the model reported. */
export interface ModelCallTicket {
  /** Counts what the call spent (`undefined`: it failed, or reported nothing; its reservation is given back). */
  settle(usage: TokenUsage | undefined): void;
}

const REGISTRY_KEY = Symbol.for('switchboard.budgets.turns');
/** The budget of each running turn part, by its request context (shared by duplicated package copies). */
const holder = globalThis as { [REGISTRY_KEY]?: WeakMap<RequestContext, TurnBudget> };
holder[REGISTRY_KEY] ??= new WeakMap();
const registry = holder[REGISTRY_KEY];

function addTo(total: Spend, amounts: Spend, sign = 1): void {
  total.inputTokens += sign * amounts.inputTokens;
  total.outputTokens += sign * amounts.outputTokens;
  total.nanoCost += sign * amounts.nanoCost;
}

function minus(a: Spend, b: Spend): Spend {
  return {
    inputTokens: a.inputTokens - b.inputTokens,
    outputTokens: a.outputTokens - b.outputTokens,
    nanoCost: a.nanoCost - b.nanoCost,
  };
}

function amountOf(spend: Spend, limit: LimitName): number {
  if (limit === 'cost') return spend.nanoCost / NANO;
  if (limit === 'totalTokens') return spend.inputTokens + spend.outputTokens;
  return spend[limit];
}

const LIMIT_OF_UNIT = {
  inputTokens: 'inputTokens',
  outputTokens: 'outputTokens',
  totalTokens: 'totalTokens',
  nanoCost: 'cost',
} as const;

/**
 * What one turn (the part this process runs) may still spend: its own
 * limits counted here, session and tenant limits in the shared counters.
 * Registered for the turn's request context, so that every model call made
 * within the turn (agents, routers, nested orchestrators) finds it.
 */
export class TurnBudget {
  readonly #rules: BudgetRules;
  readonly #owner: SpendOwner;
  readonly #stop: (error: BudgetExceededError) => void;
  /** What this turn spent, with the reservations of calls in flight. */
  readonly #used: Spend;
  #exceeded: BudgetExceededError | undefined;

  constructor(
    rules: BudgetRules,
    owner: SpendOwner,
    earlier: TokenUsage | undefined,
    stop: (error: BudgetExceededError) => void,
  ) {
    this.#rules = rules;
    this.#owner = owner;
    this.#stop = stop;
    this.#used = noSpend();
    if (earlier)
      addTo(this.#used, {
        inputTokens: earlier.inputTokens,
        outputTokens: earlier.outputTokens,
        nanoCost: 0,
      });
  }

  /** Makes this the budget of the model calls made under `context`. */
  register(context: RequestContext): void {
    registry.set(context, this);
  }

  /**
   * Reserves what a call may spend at most; throws (and stops the turn)
   * when a limit would be passed. A promise only when session or tenant
   * limits must be asked of the shared counters.
   */
  charge(call: ModelCallCharge): ModelCallTicket | Promise<ModelCallTicket> {
    if (this.#exceeded) throw this.#exceeded;
    const rules = this.#rules;
    const inputTokens = estimateRequestTokens({ messages: call.messages, tools: call.tools });
    const outputTokens = call.maxOutputTokens ?? rules.defaultMaxOutputTokens;
    const estimate: Spend = {
      inputTokens,
      outputTokens,
      nanoCost: rules.nanoCostOf(call.model, inputTokens, outputTokens),
    };
    if (rules.turn) {
      const passed = passedLimit(this.#used, estimate, rules.turn);
      if (passed) throw this.#exceed('turn', LIMIT_OF_UNIT[passed], this.#used, estimate);
    }
    addTo(this.#used, estimate);
    if (!rules.checksShared) return this.#ticket(call.model, estimate, false);
    const entries = rules.entries(this.#owner, estimate, true);
    let answer: ChargeResult | Promise<ChargeResult>;
    try {
      answer = rules.counters.charge(this.#owner.tenant, entries);
    } catch (error) {
      addTo(this.#used, estimate, -1);
      throw error;
    }
    const settle = (result: ChargeResult): ModelCallTicket => {
      if (result.ok) return this.#ticket(call.model, estimate, true, entries);
      addTo(this.#used, estimate, -1);
      const scope = SHARED_SCOPES[result.index] as BudgetScope;
      throw this.#exceed(scope, LIMIT_OF_UNIT[result.limit], result.used, estimate);
    };
    if (!isPromiseLike(answer)) return settle(answer);
    return answer.then(settle, (error: unknown) => {
      addTo(this.#used, estimate, -1);
      throw error;
    });
  }

  #ticket(model: string, estimate: Spend, reserved: boolean, entries?: CounterEntry[]): ModelCallTicket {
    let settled = false;
    return {
      settle: (usage) => {
        if (settled) return;
        settled = true;
        const rules = this.#rules;
        const actual = usage ? rules.spendOf(model, usage) : noSpend();
        const delta = minus(actual, estimate);
        addTo(this.#used, delta);
        rules.metrics?.spent(this.#owner.tenant, actual);
        const amounts = reserved ? delta : actual;
        if (amounts.inputTokens === 0 && amounts.outputTokens === 0 && amounts.nanoCost === 0) return;
        const counted = (entries ?? rules.entries(this.#owner, amounts, false)).map((entry) => ({
          name: entry.name,
          ttlMs: entry.ttlMs,
          amounts,
        }));
        // Not waited for: the next call's charge (on the same connection) comes after it.
        try {
          const added = rules.counters.add(this.#owner.tenant, counted);
          if (isPromiseLike(added)) added.then(undefined, (error: unknown) => this.#lost(error));
        } catch (error) {
          this.#lost(error);
        }
      },
    };
  }

  #lost(error: unknown): void {
    this.#rules.logger?.warn({ err: error }, 'budgets: a model call’s spending could not be counted');
  }

  #exceed(scope: BudgetScope, limit: LimitName, used: Spend, estimate: Spend): BudgetExceededError {
    const max = limitValue(this.#rules, scope, limit);
    const error = new BudgetExceededError({
      scope,
      limit,
      max,
      used: amountOf(used, limit),
      requested: amountOf(estimate, limit),
    });
    this.#exceeded = error;
    this.#rules.metrics?.exceeded(this.#owner.tenant, scope, limit);
    this.#stop(error);
    return error;
  }
}

/** A limit's value as it was configured (tokens, or cost in the price table's currency). */
function limitValue(rules: BudgetRules, scope: BudgetScope, limit: LimitName): number {
  const limits = {
    turn: rules.turn,
    session: rules.session,
    'tenant-day': rules.tenantDay,
    'tenant-month': rules.tenantMonth,
  }[scope];
  if (limit === 'cost') return (limits?.nanoCost ?? 0) / NANO;
  return limits?.[limit] ?? 0;
}

/**
 * Checks a model call against the budgets of the turn it is made in,
 * before it is sent: `undefined` outside a turn or without budgets (at no
 * cost), a ticket to settle with the call's usage once it answered, or a
 * promise of one when session or tenant limits are set (one Redis script
 * call). Throws {@link BudgetExceededError} — and the turn ends
 * `budget_exceeded` — when the call could pass a limit. Switchboard's own
 * model calls (`llmAgent`, the LLM routers) already do this; call it in
 * your own agents and orchestrators that call models.
 *
 * @example
 * ```ts
 * const charge = chargeModelCall({ model, messages, maxOutputTokens: 500 });
 * const ticket = charge && (await charge);
 * const completion = await client.chat.completions.create({ model, messages, max_tokens: 500 });
 * ticket?.settle({ inputTokens: completion.usage!.prompt_tokens, outputTokens: completion.usage!.completion_tokens });
 * ```
 */
export function chargeModelCall(
  call: ModelCallCharge,
): ModelCallTicket | Promise<ModelCallTicket> | undefined {
  const context = RequestContext.tryCurrent();
  if (context === undefined) return undefined;
  return registry.get(context)?.charge(call);
}
