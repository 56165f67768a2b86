import {
  ApprovalExpiredError,
  ApprovalResolvedError,
  CorruptRecordError,
  NotFoundError,
  RequestContext,
  TurnAbandonedError,
  TurnNotActiveError,
} from '@switchboard/core';
import type { SessionLease } from '../stores/session-store.js';
import { isFinished, pendingApprovals, type TurnRecord } from '../turns/turn-record.js';
import { decide, expireOverdue, isOverdue, withdraw } from './approvals.js';
import type { TurnEvent } from './events.js';
import type { LoopParts } from './loop-parts.js';
import { interruption, type SessionHold } from './session-hold.js';
import type { SessionViews } from './session-views.js';
import { runSteps, type Steps, settled } from './steps.js';
import type { TurnControl } from './turn-control.js';
import { closing, finish } from './turn-ending.js';
import type { TurnLoop } from './turn-loop.js';
import { commit, moveTo } from './turn-machine.js';
import { resultOfRecord } from './turn-result.js';
import { TurnState } from './turn-state.js';
import {
  approvalAttributes,
  emitTurnStart,
  errorEvent,
  notEndingTheDialog,
  startPart,
} from './turn-telemetry.js';
import type { ApprovalResolution, CancelRequest, TurnResult } from './turn-types.js';

/** What resuming a stored turn needs from its engine. */
export interface ResumptionParts {
  loop: TurnLoop;
  loopParts: LoopParts;
  views: SessionViews;
  hold: SessionHold;
  /** A request context like `context` (same session, tenant, request id and control) for another user. */
  contextFor(context: RequestContext, userId: string | undefined, control: TurnControl): RequestContext;
}

/**
 * Continues (or closes) a stored turn: whoever holds the session's lease
 * loads the turn from its record and the session's messages, through
 * {@link TurnResumption.load}, the one loader of every resume path (an
 * approval's decision, a cancel, a new message finding the last turn
 * unfinished, a retried request whose turn was left running).
 */
export class TurnResumption {
  readonly #parts: ResumptionParts;

  constructor(parts: ResumptionParts) {
    this.#parts = parts;
  }

  /** Rebuilds a stored turn from the session's messages, to continue or close it. */
  *load(
    record: TurnRecord,
    lease: SessionLease,
    requestContext: RequestContext,
    control: TurnControl,
    emit: ((event: TurnEvent) => void) | undefined,
  ): Steps<TurnState> {
    const { views, loopParts } = this.#parts;
    const { sessionId, tenantId } = requestContext;
    const sessions = views.of(tenantId);
    const history = yield* settled(sessions.read(sessionId));
    const turn = TurnState.fromRecord(sessionId, record, history, loopParts.options.historyWindow, {
      lease,
      control,
      requestContext,
      listener: emit,
      sessions,
      idleTtlMs: views.storeIdleMs(tenantId),
    });
    if (!turn) {
      throw new CorruptRecordError({
        key: `session ${sessionId}`,
        detail: `the user message of turn '${record.turnId}' is missing`,
      });
    }
    // A profile the app no longer has gives way to its default.
    const profiles = loopParts.profiles.withConfig(requestContext.config);
    turn.limits = (record.profile && profiles.get(record.profile)) || profiles.default;
    return turn;
  }

  /**
   * Runs a loaded turn on, as a new part of it: after its approvals were
   * decided, or (`recovery`) after the replica that ran it stopped. With
   * `storeFirst`, the turn (running, with its approvals' decisions) is
   * stored before anything runs: a crash while an approved call runs leaves
   * it approved (recovery runs it again, asking nobody), and no rejection
   * can land on a call that ran.
   */
  *resume(
    turn: TurnState,
    resumed: 'approval' | 'recovery',
    attributes?: Record<string, string>,
    storeFirst = false,
  ): Steps<TurnResult> {
    if (resumed === 'recovery') turn.recoveries = (turn.recoveries ?? 0) + 1;
    moveTo(turn, 'running');
    if (storeFirst) yield* settled(commit(turn, []));
    startPart(this.#parts.loopParts, turn, resumed, attributes);
    emitTurnStart(turn, resumed);
    return yield* this.#parts.loop.drive(turn);
  }

  /** Ends a loaded turn without running it further (cancelled, or abandoned with `recovery: 'fail'`). */
  *close(turn: TurnState, status: 'interrupted' | 'failed', error: Error): Steps<TurnResult> {
    const { loopParts } = this.#parts;
    startPart(loopParts, turn, status === 'interrupted' ? 'cancel' : 'recovery');
    return yield* finish(loopParts, turn, closing(loopParts, turn, status, error));
  }

  /** Resolves one approval; when it was the last pending one, the turn continues here. */
  *resolve(
    resolution: ApprovalResolution,
    requestContext: RequestContext,
    control: TurnControl,
  ): Steps<TurnResult> {
    const { views, hold, loopParts } = this.#parts;
    return yield* hold.holding(
      views.of(resolution.tenantId),
      resolution.sessionId,
      loopParts.options.sessionWaitMs,
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
    const { views, loopParts } = this.#parts;
    const sessions = views.of(resolution.tenantId);
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
    if (!expired) decide(approval, decision, { decidedBy: userId, requestedFor: record.userId, comment });
    // An expired approval still moves the turn on; the stream then ends with the expiry, not with turn-end.
    const emit = expired ? notEndingTheDialog(resolution.onEvent) : resolution.onEvent;
    // The resumed part is the requester's turn: its orchestrator, agents, approval rules, user memory and
    // spans see the user who sent the message. The approver is on the approval (`decidedBy`) and on the
    // resumed part's root span (`switchboard.approval.decided_by`).
    const requester =
      record.userId === requestContext.userId
        ? requestContext
        : this.#parts.contextFor(requestContext, record.userId, control);
    const turn = yield* this.load(record, lease, requester, control, emit);
    control.turnId = turn.turnId;
    let result: TurnResult;
    if (pendingApprovals(turn).length > 0) {
      // Others still wait: store this decision and stay paused.
      yield* settled(commit(turn, []));
      result = resultOfRecord(sessionId, turn.snapshot(), [], loopParts.options.approvalMessage);
    } else {
      const resumed = () => this.resume(turn, 'approval', approvalAttributes(turn.approvals ?? []), true);
      result =
        requester === requestContext
          ? yield* resumed()
          : yield* settled(RequestContext.run(requester, () => runSteps(resumed())));
    }
    if (expired) {
      const error = new ApprovalExpiredError({ approvalId, expiresAt: approval.expiresAt ?? '' });
      turn.runtime.emit?.(errorEvent(sessionId, turn.turnId, error.code, error.message, true));
      throw error;
    }
    return result;
  }

  /**
   * Recovers a turn left `running` by a replica that stopped, with nobody
   * asking (the sweeper): once this replica has the session's lease, the
   * turn is resumed (or closed, per the app's `recovery`) as a new message
   * would have it. Undefined when the session's last turn is not running
   * any more (it ended, or another replica recovered it meanwhile).
   */
  *recover(
    sessionId: string,
    tenantId: string | undefined,
    waitMs: number,
    requestContext: RequestContext,
    control: TurnControl,
  ): Steps<TurnResult | undefined> {
    const { views, hold, loopParts } = this.#parts;
    const sessions = views.of(tenantId);
    return yield* hold.holding(sessions, sessionId, waitMs, control, (lease) =>
      this.#recoverLeased(sessionId, requestContext, control, lease, loopParts.options.recovery === 'fail'),
    );
  }

  *#recoverLeased(
    sessionId: string,
    requestContext: RequestContext,
    control: TurnControl,
    lease: SessionLease,
    fail: boolean,
  ): Steps<TurnResult | undefined> {
    const sessions = this.#parts.views.of(requestContext.tenantId);
    const record = yield* settled(sessions.lastTurn(sessionId));
    if (record?.status !== 'running') return undefined;
    const turn = yield* this.load(record, lease, requestContext, control, undefined);
    control.turnId = turn.turnId;
    if (fail) return yield* this.close(turn, 'failed', new TurnAbandonedError({ turnId: turn.turnId }));
    return yield* this.resume(turn, 'recovery');
  }

  /** Stops a running or paused turn (it ends `interrupted`), wherever it runs. */
  *cancel(request: CancelRequest, requestContext: RequestContext, control: TurnControl): Steps<TurnResult> {
    const { views, hold, loopParts } = this.#parts;
    const { sessionId, turnId, tenantId } = request;
    const sessions = views.of(tenantId);
    yield* hold.stopRunning(sessions, sessionId, tenantId, turnId, 'cancelled');
    return yield* hold.holding(sessions, sessionId, loopParts.options.sessionWaitMs, control, (lease) =>
      this.#cancelLeased(request, requestContext, control, lease),
    );
  }

  *#cancelLeased(
    { sessionId, turnId, tenantId }: CancelRequest,
    requestContext: RequestContext,
    control: TurnControl,
    lease: SessionLease,
  ): Steps<TurnResult> {
    const sessions = this.#parts.views.of(tenantId);
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
      return resultOfRecord(sessionId, last, history, this.#parts.loopParts.options.approvalMessage);
    }
    // Paused, or left running by a replica that stopped: close it here.
    for (const approval of pendingApprovals(last)) withdraw(approval, 'the turn was cancelled');
    const turn = yield* this.load(last, lease, requestContext, control, undefined);
    control.turnId = turnId;
    return yield* this.close(turn, 'interrupted', interruption(turnId, 'cancelled'));
  }
}
