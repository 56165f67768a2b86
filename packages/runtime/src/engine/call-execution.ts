import type { Context } from '@opentelemetry/api';
import {
  type Conversation,
  createId,
  type GuardrailBlockedError,
  type TokenUsage,
  type ToolCall,
  type ToolMessage,
} from '@switchboard/core';
import type { Agent } from '../agents/agent-contract.js';
import type { AgentResume } from '../agents/agent-pause.js';
import { isPromiseLike } from '../promise-like.js';
import type { InnerStep, StepCall } from '../turns/turn-record.js';
import { orchestratorReply } from './agent-failure.js';
import { isPausedCall, type PausedCall, runAgentCall } from './agent-runner.js';
import { type ApprovalGate, refusalMessage, verdictFor } from './approvals.js';
import { addApprovals } from './decision-resolution.js';
import { FanIn } from './fan-in.js';
import { Guards } from './guards.js';
import type { LoopParts } from './loop-parts.js';
import { type Steps, settled } from './steps.js';
import { isoNow } from './timestamp.js';
import { commit, confirmWrites, hold, type NextStep, PAUSE, RUN_AGAIN } from './turn-machine.js';
import { addUsage, type TurnState, usageOf } from './turn-state.js';

/** The state of one step's calls while they run. */
interface StepRun {
  readonly calls: readonly ToolCall[];
  /** The replies, by call index. */
  readonly results: Array<ToolMessage | undefined>;
  /** Set when any call waits for a person. */
  paused: boolean;
  readonly stepCalls: StepCall[] | undefined;
  /** Error replies to store before anything runs (refused or blocked calls). */
  refusals?: ToolMessage[];
  /** Calls the approval gate must check, by index, with what it answered (maybe pending). */
  checks?: Array<[number, ReturnType<ApprovalGate['check']>]>;
}

/** A call that may run, with what a paused agent gets back when it runs again. */
interface ToRun {
  index: number;
  resume?: AgentResume;
}

/**
 * Runs the calls of one step: those that need a person's approval get one
 * (and wait), refused ones become error replies, the rest run at once,
 * each reply stored as it arrives; an agent that pauses on an action of
 * its own gets approvals too. The turn pauses when any call waits.
 */
export function* runCalls(
  parts: LoopParts,
  turn: TurnState,
  calls: readonly ToolCall[],
  conversation: Conversation,
  decisionContext: Context,
  stepCalls?: StepCall[],
): Steps<NextStep> {
  const step: StepRun = { calls, results: new Array(calls.length), paused: false, stepCalls };
  const toRun = sortCalls(parts, turn, step);
  if (step.checks) yield* checkApprovals(parts, turn, step, toRun);
  if (step.refusals) yield* settled(commit(turn, step.refusals));

  // An agent's side effects wait until what came before them is stored.
  if (turn.unconfirmed || turn.held) yield* confirmWrites(turn);

  if (toRun.length === 1) {
    const { index, resume } = toRun[0] as ToRun;
    const running = runCall(parts, turn, calls[index] as ToolCall, conversation, decisionContext, resume);
    const outcome = isPromiseLike(running) ? ((yield running) as Awaited<typeof running>) : running;
    const reply = settleCall(parts, turn, step, index, outcome);
    // Goes with the next write (the answer's, in a single-hop turn), or is sent without waiting (see hold).
    if (reply) hold(turn, [reply]);
  } else if (toRun.length > 1) {
    yield* runConcurrently(parts, turn, step, toRun, conversation, decisionContext);
  }

  if (turn.runtime.control.stopped !== undefined) return RUN_AGAIN;
  if (step.paused) return PAUSE;
  turn.lastResults = step.results.filter((reply): reply is ToolMessage => reply !== undefined);
  return RUN_AGAIN;
}

/**
 * Sorts a step's calls: a call a guardrail blocked or a person refused gets
 * its error reply (`refusals`, stored before anything runs), a call that
 * waits for a person pauses the step, a call that may need approval is left
 * to the gate (`checks`), and the rest are returned, in call order, to run.
 */
function sortCalls(parts: LoopParts, turn: TurnState, step: StepRun): ToRun[] {
  const { gate } = parts;
  const { calls } = step;
  const { requestContext } = turn.runtime;
  const toRun: ToRun[] = [];
  for (let index = 0; index < calls.length; index += 1) {
    const call = calls[index] as ToolCall;
    const blocked = turn.blockedCalls?.get(call.id);
    if (blocked) {
      refuse(step, index, blockedReply(call, blocked));
      continue;
    }
    const recorded = turn.approvals?.filter((approval) => approval.toolCallId === call.id);
    if (recorded && recorded.length > 0) {
      const verdict = verdictFor(recorded);
      if (verdict.action === 'wait') step.paused = true;
      else if (verdict.action === 'run') toRun.push({ index, resume: verdict.resume });
      else refuse(step, index, refusalMessage(verdict.approval));
    } else if (gate.mayRequire(call)) {
      const check: [number, ReturnType<ApprovalGate['check']>] = [index, gate.check(call, requestContext)];
      if (step.checks) step.checks.push(check);
      else step.checks = [check];
    } else toRun.push({ index });
  }
  return toRun;
}

function refuse(step: StepRun, index: number, refusal: ToolMessage): void {
  step.results[index] = refusal;
  if (step.refusals) step.refusals.push(refusal);
  else step.refusals = [refusal];
}

/** Opens an approval for each checked call that needs one (the step pauses); the others join `toRun`, in call order. */
function* checkApprovals(parts: LoopParts, turn: TurnState, step: StepRun, toRun: ToRun[]): Steps<void> {
  let checks = step.checks as NonNullable<StepRun['checks']>;
  if (checks.some(([, needed]) => isPromiseLike(needed))) {
    checks = (yield Promise.all(
      checks.map(async ([index, needed]) => [index, await needed] as [number, Awaited<typeof needed>]),
    )) as typeof checks;
  }
  for (const [index, needed] of checks as Array<[number, Awaited<ReturnType<ApprovalGate['check']>>]>) {
    if (!needed) {
      toRun.push({ index });
      continue;
    }
    const approval = parts.gate.open(step.calls[index] as ToolCall, needed);
    addApprovals(turn, [approval]);
    const stepCall = step.stepCalls?.[index];
    if (stepCall) stepCall.approvalId = approval.id;
    step.paused = true;
  }
  toRun.sort((left, right) => left.index - right.index);
}

/** A call's reply, to store; or, when its agent paused, undefined once the approvals it asked for are recorded. */
function settleCall(
  parts: LoopParts,
  turn: TurnState,
  step: StepRun,
  index: number,
  outcome: ToolMessage | PausedCall,
): ToolMessage | undefined {
  if (!isPausedCall(outcome)) {
    // The orchestrator's copy of a failure carries the error's own text; the stored reply does not.
    step.results[index] = orchestratorReply(outcome);
    const { metadata } = outcome;
    if (metadata) {
      const usage = usageOf(outcome);
      if (usage) countUsage(turn, usage);
      if (Array.isArray(metadata.innerSteps)) nestSteps(turn, outcome.toolCallId, metadata.innerSteps);
    }
    return outcome;
  }
  const approvals = parts.gate.openFromAgent(outcome.call, outcome.pause);
  addApprovals(turn, approvals);
  const stepCall = step.stepCalls?.[index];
  if (stepCall && approvals[0]) stepCall.approvalId ??= approvals[0].id;
  step.paused = true;
  return undefined;
}

/** Runs a fan-out's calls concurrently; each reply is stored as soon as it arrives, not when the slowest does. */
function* runConcurrently(
  parts: LoopParts,
  turn: TurnState,
  step: StepRun,
  toRun: readonly ToRun[],
  conversation: Conversation,
  decisionContext: Context,
): Steps<void> {
  const ready: ToolMessage[] = [];
  const waiting: Array<Promise<void>> = [];
  const fanIn = step.calls.some((call) => call.fanInGraceMs !== undefined) ? new FanIn() : undefined;
  for (const { index, resume } of toRun) {
    const call = step.calls[index] as ToolCall;
    const running = runCall(parts, turn, call, conversation, decisionContext, resume, fanIn);
    if (!isPromiseLike(running)) {
      const reply = settleCall(parts, turn, step, index, running);
      if (reply) ready.push(reply);
      continue;
    }
    waiting.push(
      running.then((outcome) => {
        const reply = settleCall(parts, turn, step, index, outcome);
        return reply ? commit(turn, [reply]) : undefined;
      }),
    );
  }
  if (ready.length > 0) yield* settled(commit(turn, ready));
  if (waiting.length === 0) return;
  try {
    yield Promise.all(waiting);
  } catch (error) {
    // A failed write ends the turn: the siblings still running are stopped rather than left behind.
    turn.runtime.control.abortAgents(error);
    throw error;
  }
}

/**
 * The user a turn's spans name when it is not the current request's: a turn
 * recovered by a message of another user stays the requester's in the trace
 * (a part an approver resumes runs in the requester's own context).
 */
export function traceUserOf(turn: TurnState): string | undefined {
  const { userId } = turn;
  return userId !== undefined && userId !== turn.runtime.requestContext.userId ? userId : undefined;
}

function runCall(
  parts: LoopParts,
  turn: TurnState,
  call: ToolCall,
  conversation: Conversation,
  decisionContext: Context,
  resume: AgentResume | undefined,
  fanIn?: FanIn,
) {
  const agent = parts.agents.get(call.toolName) as Agent;
  const timeoutMs = agent.timeoutMs ?? turn.limits?.agentTimeoutMs ?? parts.options.agentTimeoutMs;
  const correlationId = turn.steps[turn.steps.length - 1]?.annotations?.correlationId;
  const checks = parts.guards.forAgent('toolOutput', agent.name);
  const { requestContext } = turn.runtime;
  const { limits } = turn;
  return runAgentCall({
    retry:
      limits && limits.agentRetries > 0
        ? {
            retries: limits.agentRetries,
            baseDelayMs: limits.retryBaseDelayMs,
            maxDelayMs: limits.retryMaxDelayMs,
          }
        : undefined,
    correlationId,
    traceUserId: traceUserOf(turn),
    checkReply:
      checks.length === 0
        ? undefined
        : (content: string) => Guards.run(checks, 'toolOutput', content, requestContext, agent.name),
    resume,
    agent,
    call,
    conversation,
    request: turn.runtime.requestContext,
    parent: decisionContext,
    timeoutMs: call.timeoutMs === undefined ? timeoutMs : Math.min(timeoutMs, call.timeoutMs),
    control: turn.runtime.control,
    emit: turn.runtime.emit,
    exposeErrorDetails: parts.options.exposeErrorDetails,
    fanIn,
    metrics: parts.metrics,
  });
}

/**
 * Adds an agent's tokens to the turn and to its current step. The step is
 * replaced, not changed: a store may keep the step objects it was given.
 */
function countUsage(turn: TurnState, usage: TokenUsage): void {
  turn.usage = addUsage(turn.usage, usage);
  const last = turn.steps.length - 1;
  const step = turn.steps[last];
  if (step) turn.steps[last] = { ...step, usage: addUsage(step.usage, usage) };
}

/**
 * Puts an orchestrator agent's inner steps under its call in the turn's
 * steps (the current step is replaced, not changed, as in {@link countUsage}).
 */
function nestSteps(turn: TurnState, toolCallId: string, innerSteps: InnerStep[]): void {
  const last = turn.steps.length - 1;
  const step = turn.steps[last];
  const index = step ? step.calls.findIndex((call) => call.toolCallId === toolCallId) : -1;
  if (!step || index < 0) return;
  const calls = [...step.calls];
  calls[index] = { ...(calls[index] as StepCall), innerSteps };
  turn.steps[last] = { ...step, calls };
}

/** The error reply of a call a `toolInput` guardrail blocked: the agent never ran. */
function blockedReply(call: ToolCall, error: GuardrailBlockedError): ToolMessage {
  return {
    id: createId('msg'),
    role: 'tool',
    name: call.toolName,
    toolCallId: call.id,
    content: `Agent '${call.toolName}' was not called: blocked by guardrail '${error.guard}' (${error.reason})`,
    status: 'error',
    createdAt: isoNow(),
    metadata: { errorCode: error.code, guard: error.guard },
  };
}
