import {
  type AgentStatsTable,
  type ConfigView,
  createId,
  EMPTY_CONFIG,
  type Orchestrator,
  RequestContext,
  reportsAgentStats,
} from '@switchboard/core';
import type { Agent } from '../agents/agent-contract.js';
import type { Budgets } from '../budgets/budgets.js';
import type { ConfigCache } from '../config/config-cache.js';
import type { Logger } from '../logging/logger.js';
import type { EngineMetrics } from '../metrics/engine-metrics.js';
import { isPromiseLike } from '../promise-like.js';
import { bindMemory, memoryNamespace } from '../stores/memory-binding.js';
import type { MemoryStore } from '../stores/memory-store.js';
import type { SessionStore } from '../stores/session-store.js';
import type { TurnEventLog } from '../stores/turn-event-log.js';
import { ApprovalGate } from './approvals.js';
import { Guards } from './guards.js';
import type { LoopParts } from './loop-parts.js';
import { MemoryRenewal } from './memory-renewal.js';
import { Profiles } from './profiles.js';
import { SessionHold } from './session-hold.js';
import { SessionViews } from './session-views.js';
import { runSteps, type Steps } from './steps.js';
import type { TraceNaming } from './trace-labels.js';
import { TurnControl } from './turn-control.js';
import { TurnLoop } from './turn-loop.js';
import { TurnOpening } from './turn-opening.js';
import { resultOfRecord } from './turn-result.js';
import { TurnResumption } from './turn-resumption.js';
import type {
  ApprovalResolution,
  CancelRequest,
  TurnOptions,
  TurnRequest,
  TurnResult,
} from './turn-types.js';

export type {
  ApprovalResolution,
  CancelRequest,
  ConcurrencyPolicy,
  DirectCall,
  TurnOptions,
  TurnRequest,
  TurnResult,
} from './turn-types.js';
export { resultOfRecord };

interface EngineParts {
  orchestrator: Orchestrator;
  agents: ReadonlyMap<string, Agent>;
  sessions: SessionStore;
  memory: MemoryStore;
  /** Aborted to abandon running turns (server shutdown after the grace period). */
  signal: AbortSignal;
  /** Where failed turns are logged. */
  logger?: Logger;
  /** Where turn, agent-call and lease metrics are recorded. */
  metrics?: EngineMetrics;
  /** Names and tags each turn's trace. */
  naming: TraceNaming;
  /** Where each turn's events are kept for rejoining clients. */
  eventLog: TurnEventLog | undefined;
  /** The app's spending budgets, if it has any. */
  budgets?: Budgets;
  /** The live configuration each turn runs under (none: every turn sees no item). */
  config?: ConfigCache;
}

/** Who a request is for: the parts of a request every entry point has. */
interface Caller {
  sessionId: string;
  userId?: string;
  tenantId?: string;
  requestId?: string;
  /** The `x-switchboard-depth` of the request (servers calling servers), 0 from a client. */
  depth?: number;
}

/**
 * Runs turns: user → orchestrator → agent(s) → orchestrator → … → user.
 *
 * A turn is stored when it starts and with every message it produces, so
 * its record and messages are its checkpoint: a turn that paused for
 * approval continues from them on whichever replica receives the decision,
 * and a turn whose replica died is recovered from them by the next request
 * on its session. Whoever holds the session's lease may write, and only
 * while it holds it.
 *
 * A turn is written as {@link Steps}: it waits only where something is
 * pending, so with a store that answers at once (the in-memory one) and an
 * orchestrator and agents that do too, it runs in one go.
 *
 * This is the front door: it applies the options' defaults, builds the
 * request's context, and hands over to the opening (a new message), the
 * resumption (an approval, a cancel) and the session hold; see
 * `docs/concepts/turn-life.md` for the engine's files.
 */
export class TurnEngine {
  readonly #parts: EngineParts;
  readonly #views: SessionViews;
  readonly #hold: SessionHold;
  readonly #opening: TurnOpening;
  readonly #resumption: TurnResumption;
  readonly #approvalMessage: string;
  readonly #unwatchStats: (() => void) | undefined;
  /**
   * The agents' stats as a tenant sees them (read from its app memory), when
   * the orchestrator keeps them (`withBreaker`); undefined otherwise.
   */
  readonly agentStats: ((tenantId: string | undefined) => Promise<AgentStatsTable>) | undefined;

  constructor(
    parts: EngineParts,
    {
      maxHops = 10,
      historyWindow = 50,
      agentTimeoutMs = 60_000,
      sessionWaitMs = 10_000,
      leaseTtlMs = 30_000,
      failureMessage = 'Sorry, something went wrong while handling your message. Please try again.',
      exposeErrorDetails = false,
      sessionIdleTtlSeconds = 86_400,
      tenantSessionIdleTtlSeconds = {},
      concurrency = 'wait',
      recovery = 'resume',
      pendingApprovals = 'block',
      approvalPolicy,
      approvalTtlSeconds = 86_400,
      approvalMessage = 'This needs a person’s approval before I can go on.',
      interruptedMessage = 'This request was stopped before it finished.',
      answerRejectedMessage = 'The answer to this request was not approved.',
      guardrails,
      blockedMessage = 'Sorry, I can’t help with that request.',
      profiles,
      profile,
      reviews = [],
      requestProfiles,
    }: TurnOptions = {},
  ) {
    this.#parts = parts;
    this.#approvalMessage = approvalMessage;
    const options: LoopParts['options'] = {
      maxHops,
      historyWindow,
      agentTimeoutMs,
      sessionWaitMs,
      leaseTtlMs,
      failureMessage,
      exposeErrorDetails,
      sessionIdleTtlSeconds,
      tenantSessionIdleTtlSeconds,
      concurrency,
      recovery,
      pendingApprovals,
      approvalTtlSeconds,
      approvalMessage,
      interruptedMessage,
      answerRejectedMessage,
      blockedMessage,
    };
    const guards = new Guards(guardrails);
    const profileSet = new Profiles(profiles, profile, requestProfiles);
    const loopParts: LoopParts = {
      orchestrator: parts.orchestrator,
      agents: parts.agents,
      sessions: parts.sessions,
      gate: new ApprovalGate(parts.agents, approvalPolicy, approvalTtlSeconds),
      guards,
      profiles: profileSet,
      options,
      logger: parts.logger,
      metrics: parts.metrics,
      naming: parts.naming,
      eventLog: parts.eventLog,
      budgets: parts.budgets,
    };
    const loop = new TurnLoop(loopParts);
    this.#views = new SessionViews(parts.sessions, sessionIdleTtlSeconds, tenantSessionIdleTtlSeconds);
    this.#hold = new SessionHold({
      sessions: parts.sessions,
      signal: parts.signal,
      metrics: parts.metrics,
      leaseTtlMs,
    });
    const shared = {
      loop,
      loopParts,
      views: this.#views,
      hold: this.#hold,
      contextFor: (
        { sessionId, tenantId, requestId, depth, config }: RequestContext,
        userId: string | undefined,
        control: TurnControl,
      ) => this.#requestContext({ sessionId, tenantId, requestId, depth, userId }, control, config),
    };
    this.#resumption = new TurnResumption(shared);
    this.#opening = new TurnOpening({
      ...shared,
      resumption: this.#resumption,
      memory: parts.memory,
      memoryRenewal: MemoryRenewal.for(parts.memory, sessionIdleTtlSeconds),
      reviews,
    });
    const { orchestrator, memory } = parts;
    const keepsStats = reportsAgentStats(orchestrator);
    this.agentStats = keepsStats
      ? (tenantId) =>
          orchestrator.readAgentStats(
            bindMemory(memory, 'app', memoryNamespace('app', { sessionId: '', tenantId })),
          )
      : undefined;
    this.#unwatchStats = keepsStats
      ? parts.metrics?.watchAgentStats(() => orchestrator.localAgentStats())
      : undefined;
  }

  /** Stops listening for cancels and shutdown, and the metrics reading the agents' stats (the app calls it on close). */
  close(): void {
    this.#hold.close();
    this.#unwatchStats?.();
  }

  /**
   * Processes one user message: the result once the user has been answered,
   * the turn paused for approval, or the turn failed. A promise when any
   * step had to wait; the result itself (or a synchronous throw) when none did.
   */
  run(request: TurnRequest): TurnResult | Promise<TurnResult> {
    // The configuration is fixed for the turn: at once from the cache, or loaded first when it is behind.
    const config = this.#configOf(request.tenantId);
    if (isPromiseLike(config)) return config.then((view) => this.#runWith(request, view));
    return this.#runWith(request, config);
  }

  #runWith(request: TurnRequest, config: ConfigView): TurnResult | Promise<TurnResult> {
    const control = new TurnControl(request.sessionId, this.#parts.signal);
    const context = this.#requestContext(request, control, config);
    return RequestContext.run(context, () => runSteps(this.#opening.chat(request, context, control)));
  }

  #configOf(tenantId: string | undefined): ConfigView | Promise<ConfigView> {
    return this.#parts.config?.viewOf(tenantId) ?? EMPTY_CONFIG;
  }

  /** Resolves one approval; when it was the last pending one, the turn continues here. */
  resolveApproval(resolution: ApprovalResolution): Promise<TurnResult> {
    return this.#inPromise(resolution, (context, control) =>
      this.#resumption.resolve(resolution, context, control),
    );
  }

  /**
   * Recovers the turn a stopped replica left `running` in a session (see
   * `TurnResumption.recover`), waiting up to `waitMs` for its lease (long
   * enough for a dead holder's lease to be taken over). Undefined when the
   * session's last turn no longer runs.
   */
  async recover(
    sessionId: string,
    tenantId: string | undefined,
    waitMs: number,
  ): Promise<TurnResult | undefined> {
    const record = await this.#views.of(tenantId).lastTurn(sessionId);
    if (record?.status !== 'running') return undefined;
    const caller: Caller = { sessionId, requestId: createId('req') };
    if (tenantId !== undefined) caller.tenantId = tenantId;
    if (record.userId !== undefined) caller.userId = record.userId;
    const control = new TurnControl(sessionId, this.#parts.signal);
    const context = this.#requestContext(caller, control, await this.#configOf(tenantId));
    return RequestContext.run(context, () =>
      runSteps(this.#resumption.recover(sessionId, tenantId, waitMs, context, control)),
    );
  }

  /** Stops a running or paused turn (it ends `interrupted`), wherever it runs. */
  cancel(request: CancelRequest): Promise<TurnResult> {
    return this.#inPromise(request, (context, control) => this.#resumption.cancel(request, context, control));
  }

  /**
   * A stored turn's result, as its request returned it (or would have):
   * undefined when the session (as `sessions` sees it) holds no such turn.
   */
  async readTurn(sessions: SessionStore, sessionId: string, turnId: string): Promise<TurnResult | undefined> {
    const last = await sessions.lastTurn(sessionId);
    const record =
      last?.turnId === turnId
        ? last
        : (await sessions.listTurns(sessionId)).find((turn) => turn.turnId === turnId);
    if (!record) return undefined;
    const history = record.status === 'awaiting_approval' ? [] : await sessions.read(sessionId);
    return resultOfRecord(sessionId, record, history, this.#approvalMessage);
  }

  /** The session store as `tenantId` sees it (the store itself without a tenant). */
  sessionsOf(tenantId: string | undefined): SessionStore {
    return this.#views.of(tenantId);
  }

  /** Runs `steps` in the caller's context: a promise even when every step answered at once, a rejection (not a throw) when one failed. */
  #inPromise(
    caller: Caller,
    steps: (context: RequestContext, control: TurnControl) => Steps<TurnResult>,
  ): Promise<TurnResult> {
    return Promise.resolve(this.#configOf(caller.tenantId)).then((config) => {
      const control = new TurnControl(caller.sessionId, this.#parts.signal);
      const context = this.#requestContext(caller, control, config);
      return RequestContext.run(context, () => runSteps(steps(context, control)));
    });
  }

  #requestContext(caller: Caller, control: TurnControl, config: ConfigView): RequestContext {
    const { memory } = this.#parts;
    const { sessionId, userId, tenantId } = caller;
    const owner = { sessionId, userId, tenantId };
    return new RequestContext({
      sessionId,
      userId,
      tenantId,
      requestId: caller.requestId ?? createId('req'),
      ...(caller.depth ? { depth: caller.depth } : {}),
      config,
      signal: () => control.signal,
      memory: (scope) =>
        bindMemory(memory, scope, memoryNamespace(scope, owner), {
          defaultTtlSeconds: scope === 'session' ? this.#views.idleSeconds(tenantId) : undefined,
        }),
    });
  }
}
