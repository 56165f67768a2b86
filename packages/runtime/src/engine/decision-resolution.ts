import {
  type Decision,
  type ErrorMessage,
  FanOutNotAllowedError,
  isRouteToUser,
  type JsonValue,
  OrchestratorError,
  type StepAnnotations,
  type ToolCall,
} from '@switchboard/core';
import type { GuardStage } from '../guardrails/guardrail.js';
import type { ApprovalRecord, RouteStep } from '../turns/turn-record.js';
import { type GuardOutcome, Guards } from './guards.js';
import type { LoopParts } from './loop-parts.js';
import { type Steps, settled } from './steps.js';
import { isoNow } from './timestamp.js';
import { type Ending, type Outcome, PAUSE } from './turn-machine.js';
import { addUsage, type TurnState } from './turn-state.js';
import { emitRoute } from './turn-telemetry.js';

/**
 * What the loop does with an orchestrator's decision before and after it is
 * recorded: the `toolInput` guardrails rewrite or block its calls, a
 * profile switch or the fan-out rule may turn it into an error, its step
 * (after the notes the orchestrator made) goes on the turn, and an error or
 * an answer becomes the turn's next step (`NextStep`).
 */

/** The decision with its calls' tasks as the `toolInput` guardrails let them through; blocked calls are noted on the turn. */
export function* checkCalls(
  parts: LoopParts,
  turn: TurnState,
  decision: ToolCall | ToolCall[],
): Steps<ToolCall | ToolCall[]> {
  const calls = Array.isArray(decision) ? decision : [decision];
  const checkedCalls: ToolCall[] = [];
  const recorded: JsonValue[] = [];
  for (const call of calls) {
    const checks = isRouteToUser(call) ? [] : parts.guards.forAgent('toolInput', call.toolName);
    if (checks.length === 0) {
      checkedCalls.push(call);
      continue;
    }
    const checked = yield* settled(
      Guards.run(checks, 'toolInput', call.message, turn.runtime.requestContext, call.toolName),
    );
    if (checked.block) {
      if (!turn.blockedCalls) turn.blockedCalls = new Map();
      turn.blockedCalls.set(call.id, checked.block.error);
      const { guard, reason } = checked.block.error;
      recorded.push({ toolCallId: call.id, guard, action: 'block', reason });
      checkedCalls.push(call);
    } else if (checked.rewrites) {
      for (const { guard, reason } of checked.rewrites)
        recorded.push(
          reason === undefined
            ? { toolCallId: call.id, guard, action: 'rewrite' }
            : { toolCallId: call.id, guard, action: 'rewrite', reason },
        );
      checkedCalls.push({ ...call, message: checked.text });
    } else checkedCalls.push(call);
  }
  if (recorded.length > 0) turn.recorder.annotate({ guardrails: recorded });
  return Array.isArray(decision) ? checkedCalls : (checkedCalls[0] as ToolCall);
}

/**
 * The decision as the turn's rules let it stand: the profile a router asked
 * for (`useProfile`) is taken from this decision on (an unknown one fails
 * this decision), and a profile without fan-out fails a decision of several calls.
 */
export function applyRules(parts: LoopParts, turn: TurnState, decision: Decision): Decision {
  if (turn.recorder.profileName !== undefined) decision = switchProfile(parts, turn, decision);
  const { limits } = turn;
  if (limits && !limits.allowFanOut && Array.isArray(decision) && decision.length > 1) {
    return {
      error: new FanOutNotAllowedError({ profile: limits.profile, calls: decision.length }),
      userMessage: 'Sorry, this request needs several agents at once, which is not allowed here.',
    };
  }
  return decision;
}

function switchProfile(parts: LoopParts, turn: TurnState, decision: Decision): Decision {
  const { recorder } = turn;
  const name = recorder.profileName as string;
  recorder.profileName = undefined;
  const profiles = parts.profiles.withConfig(turn.runtime.requestContext.config);
  const limits = profiles.get(name);
  if (!limits) {
    const known = profiles.names.join(', ');
    return {
      error: new OrchestratorError({
        orchestrator: parts.orchestrator.name,
        cause: new Error(`useProfile('${name}'): the app has no such profile (${known})`),
      }),
    };
  }
  turn.limits = limits;
  recorder.note('profile', { profile: name });
  return decision;
}

/** Adds the decision's step (after any notes the orchestrator recorded) to the turn, and emits them. */
export function recordStep(turn: TurnState, step: RouteStep): void {
  const { recorder } = turn;
  const { notes, annotations } = recorder;
  if (notes) {
    recorder.notes = undefined;
    for (const note of notes) addStep(turn, note);
  }
  if (annotations) {
    recorder.annotations = undefined;
    step.annotations = annotations;
  }
  if (recorder.tokens) {
    step.usage = recorder.tokens;
    turn.usage = addUsage(turn.usage, recorder.tokens);
    recorder.tokens = undefined;
  }
  addStep(turn, step);
}

/** Adds a note step to the turn at once (not with a decision), and emits it. */
export function addNote(turn: TurnState, label: string, annotations: StepAnnotations): void {
  addStep(turn, {
    hop: turn.hop,
    kind: 'note',
    calls: [],
    label,
    decidedAt: isoNow(),
    durationMs: 0,
    annotations,
  });
}

/** Records what guardrails rewrote (redactions) as a `guardrail` note step. */
export function noteRewrites(
  turn: TurnState,
  stage: GuardStage,
  rewrites: NonNullable<GuardOutcome['rewrites']>,
): void {
  addNote(turn, 'guardrail', {
    stage,
    action: 'rewrite',
    rewrites: rewrites.map(
      ({ guard, reason }): JsonValue => (reason === undefined ? { guard } : { guard, reason }),
    ),
  });
}

/** Records a guardrail's block as a `guardrail` note step. */
export function noteBlock(
  turn: TurnState,
  stage: GuardStage,
  block: NonNullable<GuardOutcome['block']>,
): void {
  const { guard, reason } = block.error;
  addNote(turn, 'guardrail', { stage, guard, action: 'block', reason });
}

/** The end of a turn whose orchestrator failed (an `ErrorMessage` decision). */
export function failedBy(parts: LoopParts, turn: TurnState, decision: ErrorMessage): Ending {
  return {
    reply: decision.userMessage ?? parts.options.failureMessage,
    status: 'failed',
    error: decision.error,
    toolCallId: `error_${turn.turnId}`,
  };
}

/**
 * The end of a turn whose orchestrator answered (`route_to_user`), or a
 * pause when the answer must wait for a person (the orchestrator asked, or
 * a review escalated): it is kept on the approval and delivered once approved.
 */
export function answerOrPause(parts: LoopParts, turn: TurnState, answer: ToolCall, step: RouteStep): Outcome {
  if (!answer.requiresApproval && turn.escalation === undefined) {
    return { reply: answer.message, status: 'completed', toolCallId: answer.id };
  }
  const approval = parts.gate.openForAnswer(
    turn.escalation === undefined ? answer : { ...answer, reason: turn.escalation },
  );
  addApprovals(turn, [approval]);
  const stepCall = step.calls[0];
  if (stepCall) stepCall.approvalId = approval.id;
  turn.answerApprovalId = approval.id;
  return PAUSE;
}

/** The end of a turn whose answer waited for a person: the answer once approved, the refusal otherwise. */
export function approvedAnswer(parts: LoopParts, turn: TurnState): Outcome {
  const approval = turn.approvals?.find((record) => record.id === turn.answerApprovalId);
  if (!approval || approval.status === 'pending') return PAUSE;
  if (approval.status === 'approved')
    return { status: 'completed', reply: approval.message, toolCallId: approval.toolCallId };
  const { answerRejectedMessage } = parts.options;
  const comment = approval.comment?.trim();
  return {
    status: 'completed',
    reply: comment ? `${answerRejectedMessage} (${comment})` : answerRejectedMessage,
    toolCallId: approval.toolCallId,
  };
}

/** Adds approvals the turn asked for. */
export function addApprovals(turn: TurnState, approvals: ApprovalRecord[]): void {
  if (turn.approvals) turn.approvals.push(...approvals);
  else turn.approvals = approvals;
}

/** Adds a step to the turn and emits it as a `route` event. */
function addStep(turn: TurnState, step: RouteStep): void {
  turn.steps.push(step);
  emitRoute(turn, step);
}
