import { createHash } from 'node:crypto';
import {
  ApprovalExpiredError,
  ApprovalPendingError,
  ApprovalResolvedError,
  ConfigurationError,
  CorruptRecordError,
  createId,
  IdempotencyKeyReusedError,
  type MessageItem,
  NotFoundError,
  type Orchestrator,
  RequestContext,
  StoreUnavailableError,
  TurnAbandonedError,
  TurnInterruptedError,
  type TurnLimits,
  TurnNotActiveError,
  type UserMessage,
  ValidationError,
} from '@switchboard/core';
import type { Agent } from '../agents/agent.js';
import type { ConversationReview } from '../guardrails/guardrail.js';
import type { Logger } from '../logging/logger.js';
import type { EngineMetrics } from '../metrics/engine-metrics.js';
import { isPromiseLike } from '../promise-like.js';
import { bindMemory, memoryNamespace, userSessionsNamespace } from '../stores/memory-binding.js';
import type { MemoryStore } from '../stores/memory-store.js';
import type { LeaseOptions, SessionLease, SessionStore } from '../stores/session-store.js';
import { sessionStoreId, tenantSessions } from '../stores/tenant-sessions.js';
import {
  type ApprovalRecord,
  isFinished,
  pendingApprovals,
  publicApproval,
  type TurnRecord,
} from '../turns/turn-record.js';
import { ApprovalGate, expireOverdue, isOverdue, withdraw } from './approvals.js';
import { noteRewrites } from './decision-resolution.js';
import type { TurnEvent } from './events.js';
import { type GuardOutcome, Guards } from './guards.js';
import { LeaseRenewer } from './lease-renewer.js';
import type { LoopParts } from './loop-parts.js';
import { MemoryRenewal } from './memory-renewal.js';
import { Profiles } from './profiles.js';
import { runSteps, type Steps, settled } from './steps.js';
import { isoNow } from './timestamp.js';
import { TraceNaming } from './trace-labels.js';
import { TurnControl } from './turn-control.js';
import { block, closing, finish } from './turn-ending.js';
import { TurnLoop } from './turn-loop.js';
import { commit } from './turn-machine.js';
import { TurnState } from './turn-state.js';
import { abandon, endPart, startPart } from './turn-telemetry.js';
import type {
  ApprovalResolution,
  CancelRequest,
  ConcurrencyPolicy,
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

const noop = () => {};
/** Sessions remembered per user for deleting the user's data; older ones expire with their idle time. */
const MAX_INDEXED_SESSIONS = 1_000;
/** Own cancels waiting to come back, at most (a store that never echoes them must not grow the map). */
const MAX_OWN_CANCELS = 10_000;
/** Tenant views kept before the cache starts over (they are cheap to rebuild). */
const MAX_TENANT_VIEWS = 10_000;

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
 */
export class TurnEngine {
  readonly #parts: EngineParts;
  readonly #options: LoopParts['options'];
  readonly #loop: TurnLoop;
  readonly #loopParts: LoopParts;
  readonly #guards: Guards;
  readonly #profiles: Profiles;
  readonly #requestProfiles: ReadonlySet<string>;
  readonly #reviews: readonly ConversationReview[];
  readonly #renewer: LeaseRenewer;
  readonly #memoryRenewal: MemoryRenewal | undefined;
  readonly #stopListening: () => void;
  /** This engine's cancels of "whichever turn runs" not yet back from the store, by session (see `#stopRunning`). */
  readonly #ownCancels = new Map<string, number>();
  /** Each tenant's view of the session store (few tenants: kept). */
  readonly #tenantStores = new Map<string, SessionStore>();

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
    this.#renewer = new LeaseRenewer(Math.max(250, Math.floor(leaseTtlMs / 3)));
    this.#memoryRenewal = MemoryRenewal.for(parts.memory, sessionIdleTtlSeconds);
    this.#options = {
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
    this.#guards = new Guards(guardrails);
    this.#profiles = new Profiles(profiles, profile);
    this.#requestProfiles = new Set(
      requestProfiles ?? (profile === undefined ? this.#profiles.names : [profile]),
    );
    for (const name of this.#requestProfiles) {
      if (!this.#profiles.get(name))
        throw new ConfigurationError({
          message: `requestProfiles names '${name}', which is not one of the app's profiles: ${this.#profiles.names.join(', ')}`,
        });
    }
    this.#reviews = reviews;
    this.#loopParts = {
      orchestrator: parts.orchestrator,
      agents: parts.agents,
      sessions: parts.sessions,
      gate: new ApprovalGate(parts.agents, approvalPolicy, approvalTtlSeconds),
      guards: this.#guards,
      profiles: this.#profiles,
      options: this.#options,
      logger: parts.logger,
      metrics: parts.metrics,
      naming: parts.naming,
    };
    this.#loop = new TurnLoop(this.#loopParts);
    const { signal } = parts;
    const onShutdown = () => this.#renewer.abortAgents(signal.reason);
    signal.addEventListener('abort', onShutdown, { once: true });
    const unsubscribe =
      parts.sessions.onCancel?.((sessionId, turnId) => {
        // This engine's own "whichever turn runs" cancel coming back: it stopped that turn already, and the
        // turn running now is the one that sent it (the `interrupt` policy's new message).
        if (turnId === undefined && this.#ownEcho(sessionId)) return;
        this.#renewer.stop(sessionId, turnId, (id) => interruption(id, 'cancelled'));
      }) ?? noop;
    const unwatch = parts.metrics?.watchLeases(() => this.#renewer.size);
    this.#stopListening = () => {
      signal.removeEventListener('abort', onShutdown);
      unsubscribe();
      unwatch?.();
    };
  }

  /** Stops listening for cancels and shutdown (the app calls it on close). */
  close(): void {
    this.#stopListening();
  }

  /**
   * Processes one user message: the result once the user has been answered,
   * the turn paused for approval, or the turn failed. A promise when any
   * step had to wait; the result itself (or a synchronous throw) when none did.
   */
  run(request: TurnRequest): TurnResult | Promise<TurnResult> {
    const control = new TurnControl(request.sessionId, this.#parts.signal);
    const context = this.#requestContext(request, control);
    return RequestContext.run(context, () => runSteps(this.#chat(request, context, control)));
  }

  /** Resolves one approval; when it was the last pending one, the turn continues here. */
  resolveApproval(resolution: ApprovalResolution): Promise<TurnResult> {
    const control = new TurnControl(resolution.sessionId, this.#parts.signal);
    const context = this.#requestContext(resolution, control);
    // A promise even when every step answered at once, and a rejection (not a throw) when one failed.
    return new Promise((resolve) =>
      resolve(RequestContext.run(context, () => runSteps(this.#resolve(resolution, context, control)))),
    );
  }

  /** Stops a running or paused turn (it ends `interrupted`), wherever it runs. */
  cancel(request: CancelRequest): Promise<TurnResult> {
    const control = new TurnControl(request.sessionId, this.#parts.signal);
    const context = this.#requestContext(request, control);
    return new Promise((resolve) =>
      resolve(RequestContext.run(context, () => runSteps(this.#cancel(request, context, control)))),
    );
  }

  #requestContext(caller: Caller, control: TurnControl): RequestContext {
    const { memory } = this.#parts;
    const { sessionId, userId, tenantId } = caller;
    const owner = { sessionId, userId, tenantId };
    return new RequestContext({
      sessionId,
      userId,
      tenantId,
      requestId: caller.requestId ?? createId('req'),
      ...(caller.depth ? { depth: caller.depth } : {}),
      signal: () => control.signal,
      memory: (scope) =>
        bindMemory(memory, scope, memoryNamespace(scope, owner), {
          defaultTtlSeconds: scope === 'session' ? this.#idleSeconds(tenantId) : undefined,
        }),
    });
  }

  /** The idle time of a tenant's sessions, in seconds. */
  #idleSeconds(tenantId: string | undefined): number {
    const own = tenantId === undefined ? undefined : this.#options.tenantSessionIdleTtlSeconds[tenantId];
    return own ?? this.#options.sessionIdleTtlSeconds;
  }

  /** The idle time to pass to the store for a tenant with one of its own (ms), else undefined (the store's). */
  #storeIdleMs(tenantId: string | undefined): number | undefined {
    const own = tenantId === undefined ? undefined : this.#options.tenantSessionIdleTtlSeconds[tenantId];
    return own === undefined ? undefined : own * 1000;
  }

  /**
   * The periodic reviews due at the start of a turn: each runs once `every`
   * messages (default 10) came since it last ran, over the recent messages.
   * Where it stopped is kept in session memory (`review:<name>`). `warn` and
   * `escalate` are recorded as a `review` note step; `escalate` makes the
   * answer wait for a person. A review that throws is recorded as a warning:
   * it does not hold up the conversation.
   */
  *#review(turn: TurnState): Steps<void> {
    const { requestContext } = turn.runtime;
    const memory = requestContext.getMemory('session');
    const { messages } = turn;
    for (const review of this.#reviews) {
      const every = review.every ?? 10;
      const key = `review:${review.name}`;
      const stored = yield* settled(memory.getContent(key));
      const last = stored.success
        ? (stored.data as { lastMessageId?: unknown } | undefined)?.lastMessageId
        : undefined;
      const at = typeof last === 'string' ? messages.findIndex((message) => message.id === last) : -1;
      const since = messages.length - (at + 1);
      if (since < every) continue;
      let verdict: Awaited<ReturnType<ConversationReview['review']>>;
      try {
        verdict = yield* settled(review.review(messages, { request: requestContext }));
      } catch (error) {
        verdict = {
          verdict: 'warn',
          reason: `the review failed (${error instanceof Error ? error.name : 'error'})`,
        };
      }
      yield* settled(memory.setContent(key, { lastMessageId: messages[messages.length - 1]?.id }));
      if (verdict.verdict === 'pass') continue;
      turn.recorder.note('review', { review: review.name, verdict: verdict.verdict, reason: verdict.reason });
      turn.span?.setAttribute(`switchboard.review.${review.name}`, verdict.verdict);
      if (verdict.verdict === 'escalate') turn.escalation = `review '${review.name}': ${verdict.reason}`;
    }
  }

  /** The limits a new turn runs under: the profile its request asks for (only the app's), else the app's default. */
  #limitsFor(request: TurnRequest): TurnLimits | undefined {
    const asked = request.metadata?.profile;
    if (asked === undefined) return this.#profiles.default;
    const limits =
      typeof asked === 'string' && this.#requestProfiles.has(asked) ? this.#profiles.get(asked) : undefined;
    if (!limits)
      throw new ValidationError({
        message: `metadata.profile must be one of: ${[...this.#requestProfiles].join(', ')}`,
      });
    return limits;
  }

  /**
   * Where a turn's events go. With output guardrails, text is not streamed
   * as it is written: a delta could carry what the guardrail would remove.
   */
  #emitFor(onEvent: ((event: TurnEvent) => void) | undefined): ((event: TurnEvent) => void) | undefined {
    if (!onEvent || this.#guards.output.length === 0) return onEvent;
    return (event) => {
      if (event.type !== 'agent-delta' && event.type !== 'answer-delta') onEvent(event);
    };
  }

  /** The session store as `tenantId` sees it (the store itself without a tenant). */
  sessionsOf(tenantId: string | undefined): SessionStore {
    if (tenantId === undefined) return this.#parts.sessions;
    let view = this.#tenantStores.get(tenantId);
    if (!view) {
      if (this.#tenantStores.size >= MAX_TENANT_VIEWS) this.#tenantStores.clear();
      view = tenantSessions(this.#parts.sessions, tenantId);
      this.#tenantStores.set(tenantId, view);
    }
    return view;
  }

  // ── Holding a session ──────────────────────────────────────────────────────

  /**
   * Runs `body` while holding the session: the lease is renewed (a lost
   * lease stops the turn at once), the turn can be stopped by a cancel, and
   * the lease is released at the end. The release is awaited, since the
   * session's next message may go to another replica that must find it
   * free, except after a store failure: then it is left to the store to
   * send once the store is back, rather than making the client wait twice.
   */
  *#holding<T>(
    sessions: SessionStore,
    sessionId: string,
    waitMs: number,
    control: TurnControl,
    body: (lease: SessionLease) => Steps<T>,
    withOpenTurn = false,
  ): Steps<T> {
    const { signal } = this.#parts;
    const leaseTtlMs = this.#options.leaseTtlMs;
    const options: LeaseOptions = { ttlMs: leaseTtlMs, waitMs, signal };
    if (withOpenTurn) options.withOpenTurn = true;
    const lease = yield* settled(sessions.acquireLease(sessionId, options));
    this.#renewer.add(lease, control);
    let storeDown = false;
    try {
      return yield* body(lease);
    } catch (error) {
      storeDown = StoreUnavailableError.isInstance(error);
      throw error;
    } finally {
      this.#renewer.delete(lease);
      let released: void | Promise<void> | undefined;
      try {
        released = lease.release();
      } catch {
        // The store keeps releases it could not send; the lease expires by itself otherwise.
      }
      if (isPromiseLike(released) && !storeDown) yield released.then(undefined, noop);
    }
  }

  // ── A new message ──────────────────────────────────────────────────────────

  *#chat(request: TurnRequest, context: RequestContext, control: TurnControl): Steps<TurnResult> {
    const { sessionId, tenantId } = request;
    const sessions = this.sessionsOf(tenantId);
    const policy: ConcurrencyPolicy = request.concurrency ?? this.#options.concurrency;
    if (policy === 'interrupt') {
      yield* this.#stopRunning(sessions, sessionId, tenantId, undefined, 'superseded by a new message');
    }
    const waitMs = policy === 'reject' ? 0 : this.#options.sessionWaitMs;
    // The turn's opening is the first store call under the lease: the store may take the lease with it.
    return yield* this.#holding(
      sessions,
      sessionId,
      waitMs,
      control,
      (lease) => this.#chatLeased(request, context, control, lease, policy),
      true,
    );
  }

  *#chatLeased(
    request: TurnRequest,
    requestContext: RequestContext,
    control: TurnControl,
    lease: SessionLease,
    policy: ConcurrencyPolicy,
  ): Steps<TurnResult> {
    const { sessionId, userId, tenantId } = request;
    const sessions = this.sessionsOf(tenantId);
    const limits = this.#limitsFor(request);
    const trace = TraceNaming.fromMetadata(request.metadata);
    // The input guardrails run before anything else sees the message: what they let through is all that is
    // stored, traced, streamed and routed.
    let content = request.message;
    let checked: GuardOutcome | undefined;
    if (this.#guards.input.length > 0) {
      checked = yield* settled(Guards.run(this.#guards.input, 'input', content, requestContext));
      content = checked.block ? `[blocked by guardrail '${checked.block.error.guard}']` : checked.text;
    }
    const startedAt = isoNow();
    const userMessage: UserMessage = {
      id: createId('msg'),
      role: 'user',
      content,
      createdAt: startedAt,
    };
    if (request.metadata) userMessage.metadata = request.metadata;
    const requestKey = request.idempotencyKey
      ? // Of the message as the guardrails let it through: not even a digest of what they removed is kept.
        { key: request.idempotencyKey, fingerprint: fingerprint({ ...request, message: content }) }
      : undefined;
    const turn = new TurnState(
      {
        sessionId,
        turnId: createId('turn'),
        userMessageId: userMessage.id,
        startedAt,
        status: 'running',
        userText: content,
      },
      {
        lease,
        control,
        requestContext,
        emit: this.#emitFor(request.onEvent),
        sessions,
        keyName: request.keyName,
        idleTtlMs: this.#storeIdleMs(tenantId),
        entryPoint: request.entryPoint,
        trace,
        releaseWithLastWrite: true,
      },
    );
    turn.limits = limits;
    if (request.directCall) turn.direct = request.directCall;
    // In the same tick as the turn's first store call: with Redis, one round trip carries both.
    this.#memoryRenewal?.renew(
      memoryNamespace('session', { sessionId, userId, tenantId }),
      this.#idleSeconds(tenantId),
    );
    // A previous turn left unfinished is settled first; twice at most (it cannot be unfinished again).
    for (let attempt = 0; ; attempt += 1) {
      if (attempt === 0) startPart(this.#loopParts, turn);
      const opening = sessions.openTurn(sessionId, userMessage, {
        turn: turn.snapshot(),
        limit: this.#options.historyWindow + 1,
        lease,
        requestKey,
        idleTtlMs: turn.runtime.idleTtlMs,
      });
      turn.wrote = true;
      turn.storeAnswersAtOnce = !isPromiseLike(opening);
      let opened: Awaited<typeof opening>;
      try {
        opened = yield* settled(opening);
      } catch (error) {
        abandon(this.#loopParts, turn, error);
        throw this.#unknownOutcome(error, turn.turnId);
      }
      if (opened.kind === 'opened') {
        const { messages } = opened;
        if (messages[messages.length - 1]?.id !== userMessage.id) messages.push(userMessage);
        turn.messages = messages;
        turn.turnStart = messages.length - 1;
        control.turnId = turn.turnId;
        // A session's first turn with a user: remember the session under the user, so the user's data can be deleted.
        if (userId !== undefined && messages.length === 1)
          yield* this.#indexSession(sessionId, userId, tenantId);
        request.onEvent?.({
          type: 'turn-start',
          sessionId,
          turnId: turn.turnId,
          messageId: userMessage.id,
          message: content,
          endOfMessage: true,
        });
        if (checked?.block) return yield* block(this.#loopParts, turn, 'input', checked.block);
        if (checked?.rewrites) noteRewrites(turn, 'input', checked.rewrites);
        if (this.#reviews.length > 0) yield* this.#review(turn);
        return yield* this.#loop.drive(turn);
      }
      if (opened.kind === 'duplicate') {
        if (turn.span) turn.span.end();
        if (opened.fingerprint !== requestKey?.fingerprint) throw new IdempotencyKeyReusedError();
        return yield* this.#replay(sessionId, opened.turnId, lease, requestContext, control);
      }
      try {
        if (attempt >= 2) {
          throw new CorruptRecordError({
            key: `session ${sessionId}`,
            detail: 'its last turn could not be closed',
          });
        }
        const earlierTurnEvents = request.streamEarlierTurn ? turn.runtime.emit : undefined;
        yield* this.#settle(opened.turn, lease, requestContext, control, policy, earlierTurnEvents);
      } catch (error) {
        // This message's own turn never started (a pending approval, a store failure while settling).
        endPart(this.#loopParts, turn, { error: error instanceof Error ? error : new Error(String(error)) });
        throw error;
      }
    }
  }

  /**
   * Deals with the session's unfinished last turn before a new message: a
   * turn left `running` by a replica that stopped is resumed (or closed, per
   * `recovery`; with the `interrupt` policy it is closed as interrupted); a
   * turn awaiting approval blocks the message (409), or, with
   * `pendingApprovals: 'reject'`, has its approvals withdrawn and continues.
   * A turn that continues streams its events to `emit` (the new message's
   * stream, when it asked: `streamEarlierTurn`) before the new message's own
   * turn, its `turn-start` saying `resumed`, its `turn-end` not ending the dialog.
   */
  *#settle(
    record: TurnRecord,
    lease: SessionLease,
    requestContext: RequestContext,
    control: TurnControl,
    policy: ConcurrencyPolicy,
    emit: ((event: TurnEvent) => void) | undefined,
  ): Steps<void> {
    const { sessionId } = requestContext;
    if (record.status === 'awaiting_approval') {
      expireOverdue(record.approvals);
      const pending = pendingApprovals(record);
      if (pending.length > 0 && this.#options.pendingApprovals === 'block') {
        throw new ApprovalPendingError({
          sessionId,
          turnId: record.turnId,
          approvalIds: pending.map((approval) => approval.id),
        });
      }
      for (const approval of pending) withdraw(approval, 'superseded by a new message');
    }
    // A running turn is closed (interrupted, or failed with `recovery: 'fail'`) or resumed; a paused one resumes.
    const closing =
      record.status !== 'running'
        ? undefined
        : policy === 'interrupt'
          ? 'interrupted'
          : this.#options.recovery === 'fail'
            ? 'failed'
            : undefined;
    const turn = yield* this.#load(
      record,
      lease,
      requestContext,
      control,
      closing ? undefined : notEndingTheDialog(emit),
    );
    const previous = control.turnId;
    control.turnId = record.turnId;
    try {
      if (closing === 'interrupted') {
        yield* this.#close(turn, 'interrupted', interruption(record.turnId, 'superseded by a new message'));
      } else if (closing === 'failed') {
        yield* this.#close(turn, 'failed', new TurnAbandonedError({ turnId: record.turnId }));
      } else {
        const resumed = record.status === 'running' ? 'recovery' : 'approval';
        if (resumed === 'recovery') turn.recoveries = (turn.recoveries ?? 0) + 1;
        turn.status = 'running';
        startPart(this.#loopParts, turn, resumed);
        turn.runtime.emit?.({
          type: 'turn-start',
          sessionId,
          turnId: turn.turnId,
          messageId: turn.userMessageId,
          message: turn.userText,
          resumed,
          endOfMessage: true,
        });
        yield* this.#loop.drive(turn);
      }
    } finally {
      control.turnId = previous;
    }
  }

  /** Adds a new session to its user's list (`userSessions`), which lives as long as an idle session. */
  *#indexSession(sessionId: string, userId: string, tenantId: string | undefined): Steps<void> {
    const ttlSeconds = this.#idleSeconds(tenantId);
    const add = (ids: string[]) => [...ids.slice(-(MAX_INDEXED_SESSIONS - 1)), sessionId];
    try {
      yield this.#parts.memory.update(userSessionsNamespace(userId, tenantId), 'ids', add, [], {
        ttlSeconds,
      });
    } catch {
      // The turn goes on: deleting the user's data then misses this session, which expires with its idle time.
    }
  }

  /** Rebuilds a stored turn from the session's messages, to continue or close it. */
  *#load(
    record: TurnRecord,
    lease: SessionLease,
    requestContext: RequestContext,
    control: TurnControl,
    emit: ((event: TurnEvent) => void) | undefined,
  ): Steps<TurnState> {
    const { sessionId, tenantId } = requestContext;
    const sessions = this.sessionsOf(tenantId);
    const history = yield* settled(sessions.read(sessionId));
    const turn = TurnState.fromRecord(sessionId, record, history, this.#options.historyWindow, {
      lease,
      control,
      requestContext,
      emit,
      sessions,
      idleTtlMs: this.#storeIdleMs(tenantId),
    });
    if (!turn) {
      throw new CorruptRecordError({
        key: `session ${sessionId}`,
        detail: `the user message of turn '${record.turnId}' is missing`,
      });
    }
    // A profile the app no longer has gives way to its default.
    turn.limits = (record.profile && this.#profiles.get(record.profile)) || this.#profiles.default;
    return turn;
  }

  /** Ends a stored turn without running it further (cancelled, or abandoned with `recovery: 'fail'`). */
  *#close(turn: TurnState, status: 'interrupted' | 'failed', error: Error): Steps<TurnResult> {
    startPart(this.#loopParts, turn, status === 'interrupted' ? 'cancel' : 'recovery');
    return yield* finish(this.#loopParts, turn, closing(this.#loopParts, turn, status, error));
  }

  /** The result of a turn that already ran for the same `Idempotency-Key` (waiting for it, or recovering it). */
  *#replay(
    sessionId: string,
    turnId: string,
    lease: SessionLease,
    requestContext: RequestContext,
    control: TurnControl,
  ): Steps<TurnResult> {
    const sessions = this.sessionsOf(requestContext.tenantId);
    const last = yield* settled(sessions.lastTurn(sessionId));
    let record = last?.turnId === turnId ? last : undefined;
    if (!record) {
      const turns = yield* settled(sessions.listTurns(sessionId));
      record = turns.find((turn) => turn.turnId === turnId);
    }
    if (!record) throw new NotFoundError({ resource: 'Turn', id: turnId });
    const history = yield* settled(sessions.read(sessionId));
    if (record.status === 'running') {
      // We hold the lease, so nobody runs it: its replica stopped. Recover it, then answer with it.
      const turn = TurnState.fromRecord(sessionId, record, history, this.#options.historyWindow, {
        lease,
        control,
        requestContext,
        emit: undefined,
        sessions,
        idleTtlMs: this.#storeIdleMs(requestContext.tenantId),
      });
      if (!turn) throw new NotFoundError({ resource: 'Turn', id: turnId });
      turn.limits = (record.profile && this.#profiles.get(record.profile)) || this.#profiles.default;
      turn.recoveries = (turn.recoveries ?? 0) + 1;
      startPart(this.#loopParts, turn, 'recovery');
      return yield* this.#loop.drive(turn);
    }
    return resultOfRecord(sessionId, record, history, this.#options.approvalMessage);
  }

  // ── Approvals ──────────────────────────────────────────────────────────────

  *#resolve(
    resolution: ApprovalResolution,
    requestContext: RequestContext,
    control: TurnControl,
  ): Steps<TurnResult> {
    const sessions = this.sessionsOf(resolution.tenantId);
    return yield* this.#holding(
      sessions,
      resolution.sessionId,
      this.#options.sessionWaitMs,
      control,
      (lease) => this.#resolveLeased(resolution, requestContext, control, lease),
    );
  }

  *#resolveLeased(
    resolution: ApprovalResolution,
    requestContext: RequestContext,
    control: TurnControl,
    lease: SessionLease,
  ): Steps<TurnResult> {
    const sessions = this.sessionsOf(resolution.tenantId);
    const { sessionId, approvalId, decision, comment, userId } = resolution;
    const record = yield* settled(sessions.lastTurn(sessionId));
    const approval = record?.approvals?.find((candidate) => candidate.id === approvalId);
    if (!record || !approval) {
      const turns = yield* settled(sessions.listTurns(sessionId));
      const earlier = turns
        .flatMap((turn) => turn.approvals ?? [])
        .find((candidate) => candidate.id === approvalId);
      if (earlier) throw new ApprovalResolvedError({ approvalId, status: earlier.status });
      throw new NotFoundError({ resource: 'Approval', id: approvalId });
    }
    if (approval.status !== 'pending' || record.status !== 'awaiting_approval') {
      throw new ApprovalResolvedError({ approvalId, status: approval.status });
    }
    const now = Date.now();
    const expired = isOverdue(approval, now);
    expireOverdue(record.approvals, now);
    if (!expired) {
      approval.status = decision === 'approve' ? 'approved' : 'rejected';
      approval.decidedAt = isoNow();
      if (userId) approval.decidedBy = userId;
      if (comment) approval.comment = comment;
    }
    // An expired approval still moves the turn on; the stream then ends with the expiry, not with turn-end.
    const onEvent = this.#emitFor(resolution.onEvent);
    const emit = expired ? notEndingTheDialog(onEvent) : onEvent;
    const turn = yield* this.#load(record, lease, requestContext, control, emit);
    control.turnId = turn.turnId;
    let result: TurnResult;
    if (pendingApprovals(turn).length > 0) {
      // Others still wait: store this decision and stay paused.
      yield* settled(commit(turn, []));
      result = resultOfRecord(sessionId, turn.snapshot(), [], this.#options.approvalMessage);
    } else {
      turn.status = 'running';
      startPart(this.#loopParts, turn, 'approval', approvalAttributes(turn.approvals ?? []));
      emit?.({
        type: 'turn-start',
        sessionId,
        turnId: turn.turnId,
        messageId: turn.userMessageId,
        message: turn.userText,
        resumed: 'approval',
        endOfMessage: true,
      });
      result = yield* this.#loop.drive(turn);
    }
    if (expired) {
      const error = new ApprovalExpiredError({ approvalId, expiresAt: approval.expiresAt ?? '' });
      resolution.onEvent?.({
        type: 'error',
        sessionId,
        turnId: turn.turnId,
        messageId: createId('evt'),
        code: error.code,
        message: error.message,
        endOfMessage: true,
        endOfDialog: true,
      });
      throw error;
    }
    return result;
  }

  // ── Cancelling ─────────────────────────────────────────────────────────────

  /** Stops the session's running turn wherever it runs: here at once, elsewhere through the store. */
  *#stopRunning(
    sessions: SessionStore,
    sessionId: string,
    tenantId: string | undefined,
    turnId: string | undefined,
    why: string,
  ): Steps<void> {
    const storeId = sessionStoreId(sessionId, tenantId);
    this.#renewer.stop(storeId, turnId, (id) => interruption(id, why));
    if (!sessions.publishCancel) return;
    if (turnId !== undefined) {
      yield* settled(sessions.publishCancel(sessionId, turnId));
      return;
    }
    if (this.#ownCancels.size >= MAX_OWN_CANCELS) this.#ownCancels.clear();
    this.#ownCancels.set(storeId, (this.#ownCancels.get(storeId) ?? 0) + 1);
    try {
      yield* settled(sessions.publishCancel(sessionId, turnId));
    } catch (error) {
      // Not published, so it will not come back.
      this.#ownEcho(storeId);
      throw error;
    }
  }

  /** Counts off one of this engine's own cancels of `storeId`; false when none is on its way back. */
  #ownEcho(storeId: string): boolean {
    const count = this.#ownCancels.get(storeId);
    if (count === undefined) return false;
    if (count <= 1) this.#ownCancels.delete(storeId);
    else this.#ownCancels.set(storeId, count - 1);
    return true;
  }

  *#cancel(request: CancelRequest, requestContext: RequestContext, control: TurnControl): Steps<TurnResult> {
    const { sessionId, turnId, tenantId } = request;
    const sessions = this.sessionsOf(tenantId);
    yield* this.#stopRunning(sessions, sessionId, tenantId, turnId, 'cancelled');
    return yield* this.#holding(sessions, sessionId, this.#options.sessionWaitMs, control, (lease) =>
      this.#cancelLeased(request, requestContext, control, lease),
    );
  }

  *#cancelLeased(
    { sessionId, turnId, tenantId }: CancelRequest,
    requestContext: RequestContext,
    control: TurnControl,
    lease: SessionLease,
  ): Steps<TurnResult> {
    const sessions = this.sessionsOf(tenantId);
    const last = yield* settled(sessions.lastTurn(sessionId));
    if (last?.turnId !== turnId) {
      const turns = yield* settled(sessions.listTurns(sessionId));
      const found = turns.find((turn) => turn.turnId === turnId);
      if (!found) throw new NotFoundError({ resource: 'Turn', id: turnId });
      throw new TurnNotActiveError({ turnId, status: found.status });
    }
    if (isFinished(last.status)) {
      if (last.status !== 'interrupted') throw new TurnNotActiveError({ turnId, status: last.status });
      // Stopped by this cancel (its own replica closed it) or an earlier one: the same answer.
      const history = yield* settled(sessions.read(sessionId));
      return resultOfRecord(sessionId, last, history, this.#options.approvalMessage);
    }
    // Paused, or left running by a replica that stopped: close it here.
    for (const approval of pendingApprovals(last)) withdraw(approval, 'the turn was cancelled');
    const turn = yield* this.#load(last, lease, requestContext, control, undefined);
    control.turnId = turnId;
    return yield* this.#close(turn, 'interrupted', interruption(turnId, 'cancelled'));
  }

  #unknownOutcome(error: unknown, turnId: string): unknown {
    if (!StoreUnavailableError.isInstance(error)) return error;
    return new StoreUnavailableError({
      message: (error as Error).message,
      cause: error,
      outcome: 'unknown',
      turnId,
    });
  }
}

/**
 * Passes events on, except that the turn's end no longer ends the dialog:
 * more follows on the same stream (an error about an expired approval, or
 * the new message's turn after a recovered one).
 */
function notEndingTheDialog(
  emit: ((event: TurnEvent) => void) | undefined,
): ((event: TurnEvent) => void) | undefined {
  if (!emit) return undefined;
  return (event) => emit(event.type === 'turn-end' ? { ...event, endOfDialog: false } : event);
}

function interruption(turnId: string, reason: string): TurnInterruptedError {
  return new TurnInterruptedError({ turnId, reason });
}

/** A stable digest of what a message asks, to tell a retry from a different request with the same key. */
function fingerprint({ message, userId, metadata }: TurnRequest): string {
  return createHash('sha256')
    .update(JSON.stringify([message, userId ?? null, metadata ?? null]))
    .digest('base64url');
}

/** Span attributes of a resumed part: how each approval was resolved, by whom, and why. */
function approvalAttributes(approvals: readonly ApprovalRecord[]): Record<string, string> {
  const resolved = approvals.filter((approval) => approval.status !== 'pending');
  return {
    'switchboard.approval.ids': resolved.map((approval) => approval.id).join(','),
    'switchboard.approval.decisions': resolved.map((approval) => approval.status).join(','),
    'switchboard.approval.decided_by': resolved.map((approval) => approval.decidedBy ?? '').join(','),
    'switchboard.approval.comments': JSON.stringify(resolved.map((approval) => approval.comment ?? '')),
  };
}

/** The result of a stored turn, as its chat request returned it (or would have). */
export function resultOfRecord(
  sessionId: string,
  record: TurnRecord,
  history: readonly MessageItem[],
  approvalMessage: string,
): TurnResult {
  const result: TurnResult = {
    sessionId,
    turnId: record.turnId,
    reply: '',
    status: record.status,
    steps: record.steps,
  };
  if (record.status === 'awaiting_approval') {
    result.reply = approvalMessage;
    result.approvals = pendingApprovals(record).map(publicApproval);
  } else {
    const start = history.findIndex((message) => message.id === record.userMessageId);
    for (let index = start + 1; start >= 0 && index < history.length; index += 1) {
      const message = history[index] as MessageItem;
      if (message.role === 'user') break;
      if (message.role === 'assistant') result.reply = message.content;
    }
  }
  if (record.usage) result.usage = record.usage;
  if (record.traceId) result.traceId = record.traceId;
  if (record.error) result.error = { ...record.error };
  return result;
}
