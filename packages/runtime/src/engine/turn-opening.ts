import { createHash } from 'node:crypto';
import {
  ApprovalPendingError,
  CorruptRecordError,
  createId,
  IdempotencyKeyReusedError,
  NotFoundError,
  type RequestContext,
  StoreUnavailableError,
  TurnAbandonedError,
  type UserMessage,
} from '@switchboard/core';
import type { ConversationReview } from '../guardrails/guardrail.js';
import { isPromiseLike } from '../promise-like.js';
import { memoryNamespace, userSessionsNamespace } from '../stores/memory-binding.js';
import type { MemoryStore } from '../stores/memory-store.js';
import type { SessionLease } from '../stores/session-store.js';
import { pendingApprovals, type TurnRecord } from '../turns/turn-record.js';
import { expireOverdue, withdraw } from './approvals.js';
import { review } from './conversation-reviews.js';
import { noteRewrites } from './decision-resolution.js';
import type { TurnEvent } from './events.js';
import { type GuardOutcome, Guards } from './guards.js';
import type { LoopParts } from './loop-parts.js';
import type { MemoryRenewal } from './memory-renewal.js';
import { interruption, type SessionHold } from './session-hold.js';
import type { SessionViews } from './session-views.js';
import { type Steps, settled } from './steps.js';
import { isoNow } from './timestamp.js';
import { TraceNaming } from './trace-labels.js';
import type { TurnControl } from './turn-control.js';
import { block } from './turn-ending.js';
import type { TurnLoop } from './turn-loop.js';
import { open } from './turn-machine.js';
import { resultOfRecord } from './turn-result.js';
import type { TurnResumption } from './turn-resumption.js';
import { TurnState } from './turn-state.js';
import {
  abandon,
  asError,
  dropPart,
  emitTurnStart,
  endPart,
  notEndingTheDialog,
  startPart,
} from './turn-telemetry.js';
import type { ConcurrencyPolicy, TurnRequest, TurnResult } from './turn-types.js';

/** Sessions remembered per user for deleting the user's data; older ones expire with their idle time. */
const MAX_INDEXED_SESSIONS = 1_000;

/** What opening a turn needs from its engine. */
export interface OpeningParts {
  loop: TurnLoop;
  loopParts: LoopParts;
  views: SessionViews;
  hold: SessionHold;
  resumption: TurnResumption;
  memory: MemoryStore;
  memoryRenewal: MemoryRenewal | undefined;
  reviews: readonly ConversationReview[];
}

/**
 * A new message's turn, up to its first decision: the input guardrails
 * check the message, the turn is opened (user message and record in one
 * store step), a retried request (same `Idempotency-Key`) gets the turn it
 * started, and a session's unfinished last turn is settled first.
 */
export class TurnOpening {
  readonly #parts: OpeningParts;

  constructor(parts: OpeningParts) {
    this.#parts = parts;
  }

  /** Processes one user message, holding its session for the whole turn. */
  *chat(request: TurnRequest, context: RequestContext, control: TurnControl): Steps<TurnResult> {
    const { views, hold, loopParts } = this.#parts;
    const { sessionId, tenantId } = request;
    const sessions = views.of(tenantId);
    const policy: ConcurrencyPolicy = request.concurrency ?? loopParts.options.concurrency;
    if (policy === 'interrupt') {
      yield* hold.stopRunning(sessions, sessionId, tenantId, undefined, 'superseded by a new message');
    }
    const waitMs = policy === 'reject' ? 0 : loopParts.options.sessionWaitMs;
    // The turn's opening is the first store call under the lease: the store may take the lease with it.
    return yield* hold.holding(
      sessions,
      sessionId,
      waitMs,
      control,
      (lease) => this.#open(request, context, control, lease, policy),
      true,
    );
  }

  *#open(
    request: TurnRequest,
    requestContext: RequestContext,
    control: TurnControl,
    lease: SessionLease,
    policy: ConcurrencyPolicy,
  ): Steps<TurnResult> {
    const { loop, loopParts, views, reviews } = this.#parts;
    const { guards, options } = loopParts;
    const { sessionId, userId, tenantId } = request;
    const sessions = views.of(tenantId);
    const { config } = requestContext;
    const limits = loopParts.profiles.withConfig(config).forRequest(request.metadata?.profile);
    const trace = TraceNaming.fromMetadata(request.metadata);
    // The input guardrails run before anything else sees the message: what they let through is all that is
    // stored, traced, streamed and routed.
    let content = request.message;
    let checked: GuardOutcome | undefined;
    if (guards.input.length > 0) {
      checked = yield* settled(Guards.run(guards.input, 'input', content, requestContext));
      content = checked.block ? `[blocked by guardrail '${checked.block.error.guard}']` : checked.text;
    }
    const startedAt = isoNow();
    const userMessage: UserMessage = { id: createId('msg'), role: 'user', content, createdAt: startedAt };
    if (request.metadata) userMessage.metadata = request.metadata;
    const requestKey = request.idempotencyKey
      ? // Of the message as the guardrails let it through: not even a digest of what they removed is kept.
        { key: request.idempotencyKey, fingerprint: fingerprint({ ...request, message: content }) }
      : undefined;
    const turn = new TurnState(
      {
        sessionId,
        turnId: request.turnId ?? createId('turn'),
        userMessageId: userMessage.id,
        startedAt,
        status: 'running',
        userText: content,
      },
      {
        lease,
        control,
        requestContext,
        listener: request.onEvent,
        sessions,
        keyName: request.keyName,
        idleTtlMs: views.storeIdleMs(tenantId),
        entryPoint: request.entryPoint,
        trace,
        releaseWithLastWrite: true,
      },
    );
    turn.limits = limits;
    turn.userId = userId;
    if (config.version.app > 0 || (config.version.tenant ?? 0) > 0) turn.configVersion = config.version;
    if (request.directCall) turn.direct = request.directCall;
    // In the same tick as the turn's first store call: with Redis, one round trip carries both.
    this.#parts.memoryRenewal?.renew(
      memoryNamespace('session', { sessionId, userId, tenantId }),
      views.idleSeconds(tenantId),
    );
    // A previous turn left unfinished is settled first; twice at most (it cannot be unfinished again).
    for (let attempt = 0; ; attempt += 1) {
      if (attempt === 0) startPart(loopParts, turn);
      const opening = open(turn, userMessage, options.historyWindow + 1, requestKey);
      let opened: Awaited<typeof opening>;
      try {
        // Inline rather than `yield* settled(…)`: one generator fewer on every turn.
        opened = isPromiseLike(opening) ? ((yield opening) as Awaited<typeof opening>) : opening;
      } catch (error) {
        abandon(loopParts, turn, error);
        throw unknownOutcome(error, turn.turnId);
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
        emitTurnStart(turn);
        if (checked?.block) return yield* block(loopParts, turn, 'input', checked.block);
        if (checked?.rewrites) noteRewrites(turn, 'input', checked.rewrites);
        if (reviews.length > 0) yield* review(reviews, turn);
        return yield* loop.drive(turn);
      }
      if (opened.kind === 'duplicate') {
        dropPart(turn);
        if (opened.fingerprint !== requestKey?.fingerprint) throw new IdempotencyKeyReusedError();
        return yield* this.#replay(opened.turnId, lease, requestContext, control);
      }
      try {
        if (attempt >= 2) {
          throw new CorruptRecordError({
            key: `session ${sessionId}`,
            detail: 'its last turn could not be closed',
          });
        }
        const earlierTurnEvents = request.streamEarlierTurn ? turn.runtime.listener : undefined;
        yield* this.#settle(opened.turn, lease, requestContext, control, policy, earlierTurnEvents);
      } catch (error) {
        // This message's own turn never started (a pending approval, a store failure while settling).
        endPart(loopParts, turn, { error: asError(error) });
        throw error;
      }
    }
  }

  /** The result of a turn that already ran for the same `Idempotency-Key` (waiting for it, or recovering it). */
  *#replay(
    turnId: string,
    lease: SessionLease,
    requestContext: RequestContext,
    control: TurnControl,
  ): Steps<TurnResult> {
    const { views, resumption, loopParts } = this.#parts;
    const { sessionId } = requestContext;
    const sessions = views.of(requestContext.tenantId);
    const last = yield* settled(sessions.lastTurn(sessionId));
    let record = last?.turnId === turnId ? last : undefined;
    if (!record) {
      const turns = yield* settled(sessions.listTurns(sessionId));
      record = turns.find((turn) => turn.turnId === turnId);
    }
    if (!record) throw new NotFoundError({ resource: 'Turn', id: turnId });
    if (record.status === 'running') {
      // We hold the lease, so nobody runs it: its replica stopped. Recover it, then answer with it.
      const turn = yield* resumption.load(record, lease, requestContext, control, undefined);
      return yield* resumption.resume(turn, 'recovery');
    }
    const history = yield* settled(sessions.read(sessionId));
    return resultOfRecord(sessionId, record, history, loopParts.options.approvalMessage);
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
    const { resumption, loopParts } = this.#parts;
    const { options } = loopParts;
    if (record.status === 'awaiting_approval') {
      expireOverdue(record.approvals);
      const pending = pendingApprovals(record);
      if (pending.length > 0 && options.pendingApprovals === 'block') {
        throw new ApprovalPendingError({
          sessionId: requestContext.sessionId,
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
          : options.recovery === 'fail'
            ? 'failed'
            : undefined;
    const turn = yield* resumption.load(
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
        yield* resumption.close(
          turn,
          'interrupted',
          interruption(record.turnId, 'superseded by a new message'),
        );
      } else if (closing === 'failed') {
        yield* resumption.close(turn, 'failed', new TurnAbandonedError({ turnId: record.turnId }));
      } else {
        yield* resumption.resume(turn, record.status === 'running' ? 'recovery' : 'approval');
      }
    } finally {
      control.turnId = previous;
    }
  }

  /** Adds a new session to its user's list (`userSessions`), which lives as long as an idle session. */
  *#indexSession(sessionId: string, userId: string, tenantId: string | undefined): Steps<void> {
    const ttlSeconds = this.#parts.views.idleSeconds(tenantId);
    const add = (ids: string[]) => [...ids.slice(-(MAX_INDEXED_SESSIONS - 1)), sessionId];
    try {
      yield this.#parts.memory.update(userSessionsNamespace(userId, tenantId), 'ids', add, [], {
        ttlSeconds,
      });
    } catch {
      // The turn goes on: deleting the user's data then misses this session, which expires with its idle time.
    }
  }
}

/** A stable digest of what a message asks, to tell a retry from a different request with the same key. */
function fingerprint({ message, userId, metadata }: TurnRequest): string {
  return createHash('sha256')
    .update(JSON.stringify([message, userId ?? null, metadata ?? null]))
    .digest('base64url');
}

/** A store failure while opening: the turn may have been stored even though the reply was lost. */
function unknownOutcome(error: unknown, turnId: string): unknown {
  if (!StoreUnavailableError.isInstance(error)) return error;
  // Never sent, or refused by Redis before it wrote: the opening stored nothing, so no turn to ask about.
  if ((error as StoreUnavailableError).outcome === 'not_stored') return error;
  return new StoreUnavailableError({
    message: (error as Error).message,
    cause: error,
    outcome: 'unknown',
    turnId,
  });
}
