import {
  AbstractOrchestrator,
  type AgentStatsTable,
  annotateStep,
  ConfigurationError,
  type Conversation,
  createId,
  type Decision,
  isErrorMessage,
  latestToolResults,
  type Memory,
  type Orchestrator,
  type ReportsAgentStats,
  RequestContext,
  SystemError,
  type ToolMessage,
  UnknownAgentError,
} from '@switchboard/core';
import {
  applyOutcomes,
  type BreakerLimits,
  type BreakerState,
  bannedAt,
  type CallOutcome,
  dueForTrial,
  EMPTY_STATE,
  parseState,
  startTrials,
} from './breaker-state.js';
import { mergeTables, summarise } from './breaker-stats.js';

/** Options of {@link withBreaker}. */
export interface BreakerOptions {
  /** Default: the wrapped orchestrator's name. The app-memory key is `breaker:<name>`. */
  name?: string;
  /** Failures inside `windowMs` that ban an agent. Default 3. */
  failures?: number;
  /** The window failures are counted in, in ms. Default 60 000. */
  windowMs?: number;
  /** How long a ban lasts before one trial call goes through, in ms. Default 30 000. */
  coolDownMs?: number;
  /** The sliding window of the agents' stats (success rate, error codes, latency), in ms. Default 300 000. */
  statsWindowMs?: number;
  /** How old this replica's copy of the bans may get before it is read again in the background, in ms. Default 1 000. */
  refreshMs?: number;
  /** The clock (epoch ms); for tests. */
  now?: () => number;
}

/** A call to an agent the breaker has banned: refused without running it. */
export class AgentBannedError extends SystemError {
  readonly code = 'agent_banned';
  /** The banned agent. */
  readonly agent: string;

  constructor({ agent, orchestrator }: { agent: string; orchestrator: string }) {
    super({
      message: `'${orchestrator}' refused the call to '${agent}': it is banned after repeated failures`,
    });
    this.agent = agent;
  }
}

interface Copy {
  state: BreakerState;
  readAt: number;
  refreshing: boolean;
  /** Changes applied here whose write has not answered yet (a background read is not taken meanwhile). */
  pending: Array<(state: BreakerState) => BreakerState>;
}

/** Tenants whose bans one breaker keeps a copy of in this process. */
const MAX_TENANT_COPIES = 1_000;

/**
 * The orchestrator {@link withBreaker} returns. Each decision records the
 * previous calls' outcomes (a write it does not wait for) and hides banned
 * agents from the wrapped orchestrator; the bans are read from the store
 * once per tenant, then refreshed in the background.
 */
export class BreakerOrchestrator extends AbstractOrchestrator implements ReportsAgentStats {
  /** The orchestrator whose agents are guarded. */
  readonly inner: Orchestrator;
  /** Where the bans live in the tenant's app memory. */
  readonly memoryKey: string;
  readonly #limits: BreakerLimits;
  readonly #refreshMs: number;
  readonly #now: () => number;
  readonly #copies = new Map<string, Copy>();

  /**
   * @deprecated Build it with {@link withBreaker}, the one way to wrap an orchestrator: the class stays
   * exported as the type `withBreaker` returns; its constructor leaves the public API in the next minor.
   */
  constructor(
    inner: Orchestrator,
    {
      name = inner?.name,
      failures = 3,
      windowMs = 60_000,
      coolDownMs = 30_000,
      statsWindowMs = 300_000,
      refreshMs = 1_000,
      now = Date.now,
    }: BreakerOptions = {},
  ) {
    super({ name, description: inner?.description, agents: inner?.agents ?? [] });
    for (const [key, value, least] of [
      ['failures', failures, 1],
      ['windowMs', windowMs, 1],
      ['coolDownMs', coolDownMs, 1],
      ['statsWindowMs', statsWindowMs, 1],
      ['refreshMs', refreshMs, 0],
    ] as const) {
      if (!Number.isInteger(value) || value < least)
        throw new ConfigurationError({
          message: `Breaker '${name}': ${key} must be an integer of at least ${least}`,
        });
    }
    this.inner = inner;
    this.memoryKey = `breaker:${name}`;
    this.#limits = { failures, windowMs, coolDownMs, statsWindowMs };
    this.#refreshMs = refreshMs;
    this.#now = now;
  }

  protected async handleMessage(conversation: Conversation): Promise<Decision> {
    const context = RequestContext.tryCurrent();
    const memory = context?.getMemory('app');
    const copy = await this.#copyFor(context?.tenantId ?? '', memory);
    const now = this.#now();
    const known = new Set(this.agents.map((agent) => agent.name));
    const outcomes = latestToolResults(conversation)
      .filter((reply) => known.has(reply.name))
      .map(outcomeOf);
    if (outcomes.length > 0)
      this.#write(copy, memory, (state) => applyOutcomes(state, outcomes, this.#limits, now));

    return this.#decide(conversation, copy, memory, now, true);
  }

  async #decide(
    conversation: Conversation,
    copy: Copy,
    memory: Memory | undefined,
    now: number,
    mayClaim: boolean,
  ): Promise<Decision> {
    const banned = bannedAt(copy.state, now);
    for (const [agent, record] of Object.entries(copy.state.agents))
      if (record.trial && record.at + this.#limits.coolDownMs > now) banned.add(agent);
    if (banned.size > 0) annotateStep(conversation, { banned: [...banned] });
    const agents =
      banned.size === 0
        ? conversation.agents
        : conversation.agents.filter((agent) => !banned.has(agent.name));
    // Summarised only when the wrapped orchestrator reads them.
    let stats: AgentStatsTable | undefined;
    const state = copy.state;
    const offered: Conversation = Object.defineProperty({ ...conversation, agents }, 'agentStats', {
      get: () => {
        stats ??= summarise(state.stats, this.#limits.statsWindowMs, now);
        return stats;
      },
      enumerable: true,
    });
    const decision = await this.inner.decide(offered);
    if (isErrorMessage(decision)) {
      // The inner orchestrator's own check refuses a call to an agent it was not offered: say why.
      const { error } = decision;
      const agent = UnknownAgentError.isInstance(error) ? (error as UnknownAgentError).agent : undefined;
      return agent !== undefined && banned.has(agent) ? this.#refusal(agent) : decision;
    }
    const calls = Array.isArray(decision) ? decision : [decision];
    const refused = calls.find((call) => banned.has(call.toolName));
    if (refused) return this.#refusal(refused.toolName);
    const due = dueForTrial(copy.state, now).filter((agent) => calls.some((call) => call.toolName === agent));
    if (due.length === 0) return decision;
    const lost = await this.#claimTrials(copy, memory, due, now);
    if (lost === undefined) return decision;
    // Another decision (maybe on another replica) makes the trial call: decide again without that agent.
    return mayClaim ? this.#decide(conversation, copy, memory, now, false) : this.#refusal(lost);
  }

  /**
   * Claims the one trial call of agents whose ban just ended, atomically in
   * the store: awaited, but only once per agent per cool-down. Returns an
   * agent whose trial another decision claimed first.
   */
  async #claimTrials(
    copy: Copy,
    memory: Memory | undefined,
    due: string[],
    now: number,
  ): Promise<string | undefined> {
    const claimant = createId('trial');
    const claim = (state: BreakerState) => startTrials(state, due, now, claimant);
    if (!memory) {
      copy.state = claim(copy.state);
      return undefined;
    }
    const claimed = await memory.updateContent<BreakerState>(
      this.memoryKey,
      (stored) => claim(parseState(stored)),
      EMPTY_STATE,
    );
    if (!claimed.success) return undefined;
    copy.state = claimed.data;
    return due.find((agent) => {
      const record = claimed.data.agents[agent];
      return (
        (record?.trialBy !== undefined && record.trialBy !== claimant) || (record?.bannedUntil ?? 0) > now
      );
    });
  }

  /** The tenant's stats as stored in its app memory (`memory`): one read, not on a turn's path. */
  async readAgentStats(memory: Memory | undefined): Promise<AgentStatsTable> {
    if (!memory) return summarise(this.#copies.get('')?.state.stats, this.#limits.statsWindowMs, this.#now());
    const read = await memory.getContent(this.memoryKey);
    const state = read.success ? parseState(read.data) : EMPTY_STATE;
    return summarise(state.stats, this.#limits.statsWindowMs, this.#now());
  }

  /** The stats of every tenant this replica holds a copy of, merged per agent (for the metrics): no read. */
  localAgentStats(): AgentStatsTable {
    const tables = [...this.#copies.values()].map((copy) => copy.state.stats);
    return summarise(mergeTables(tables), this.#limits.statsWindowMs, this.#now());
  }

  #refusal(agent: string): Decision {
    return {
      error: new AgentBannedError({ agent, orchestrator: this.name }),
      userMessage: `Sorry, the ${agent} agent is unavailable after repeated failures. Please try again in a moment.`,
    };
  }

  /** This replica's copy of a tenant's bans: read once (awaited), then refreshed without waiting. */
  async #copyFor(tenant: string, memory: Memory | undefined): Promise<Copy> {
    let copy = this.#copies.get(tenant);
    if (!copy) {
      const read = memory ? await memory.getContent(this.memoryKey) : undefined;
      copy = {
        state: read?.success ? parseState(read.data) : EMPTY_STATE,
        readAt: this.#now(),
        refreshing: false,
        pending: [],
      };
      if (this.#copies.size >= MAX_TENANT_COPIES)
        this.#copies.delete(this.#copies.keys().next().value as string);
      this.#copies.set(tenant, copy);
    } else if (memory && !copy.refreshing && this.#now() - copy.readAt >= this.#refreshMs) {
      const stale = copy;
      stale.refreshing = true;
      memory.getContent(this.memoryKey).then(
        (read) => {
          stale.refreshing = false;
          stale.readAt = this.#now();
          // While a write of this replica is on its way the read may lack it (or already hold it): the copy
          // is kept, and the write's answer brings the stored state, other replicas' changes included.
          if (read.success && stale.pending.length === 0) stale.state = parseState(read.data);
        },
        () => {
          stale.refreshing = false;
        },
      );
    }
    return copy;
  }

  /** Applies `change` to this replica's copy at once and to the store without waiting. */
  #write(copy: Copy, memory: Memory | undefined, change: (state: BreakerState) => BreakerState): void {
    copy.state = change(copy.state);
    if (!memory) return;
    copy.pending.push(change);
    const settled = (written?: BreakerState) => {
      copy.pending.splice(copy.pending.indexOf(change), 1);
      // This process's later writes run after this one (the store serialises a key's updates): not in `written`.
      if (written) copy.state = copy.pending.reduce((state, next) => next(state), written);
    };
    memory
      .updateContent<BreakerState>(this.memoryKey, (stored) => change(parseState(stored)), EMPTY_STATE)
      .then(
        (written) => settled(written.success ? written.data : undefined),
        () => settled(),
      );
  }
}

/** A reply's outcome: its error code, and its duration when this process ran the call. */
function outcomeOf(reply: ToolMessage): CallOutcome {
  const { errorCode, durationMs } = reply.metadata ?? {};
  const outcome: CallOutcome = { agent: reply.name, ok: reply.status === 'ok' };
  if (reply.status === 'error' && typeof errorCode === 'string') outcome.code = errorCode;
  if (typeof durationMs === 'number' && Number.isFinite(durationMs)) outcome.ms = durationMs;
  return outcome;
}

/**
 * Wraps an orchestrator with a circuit breaker per agent and tenant: an
 * agent that fails `failures` times within `windowMs` is banned for
 * `coolDownMs` — left out of the wrapped orchestrator's `conversation.agents`
 * (routers never see it), and a call to it fails the decision with
 * `agent_banned` without running it — then one trial call goes through: a
 * success clears it, a failure bans it again. The bans live in the tenant's
 * app memory (Redis across replicas), at most 100 agents' records and 50
 * bans; outcomes are written without waiting, so a turn makes no extra
 * awaited round trip (the first turn of a tenant on a replica reads the bans once).
 *
 * The same write keeps each agent's stats — success rate, error codes,
 * latency p50/p95 over its last 32 calls inside `statsWindowMs` — which the
 * wrapped orchestrator reads on `conversation.agentStats` (see
 * `rankByStats`), `GET /v1/agents` and the console show, and the metrics export.
 * @example
 * ```ts
 * app.mount(withBreaker(new KeywordOrchestrator({ agents }), { failures: 3, coolDownMs: 30_000 }));
 * ```
 */
export function withBreaker(inner: Orchestrator, options?: BreakerOptions): BreakerOrchestrator {
  return new BreakerOrchestrator(inner, options);
}
