import type { Context, Span } from '@opentelemetry/api';
import {
  type ConfigVersion,
  createId,
  type GuardrailBlockedError,
  type MessageItem,
  type RequestContext,
  type StepAnnotations,
  type StepRecorder,
  type TokenUsage,
  type ToolCall,
  type ToolMessage,
  type TurnLimits,
} from '@switchboard/core';
import type { SessionLease, SessionStore } from '../stores/session-store.js';
import type {
  ApprovalRecord,
  RouteStep,
  StepCall,
  TracePart,
  TurnRecord,
  TurnStatus,
} from '../turns/turn-record.js';
import { directCallOf } from './direct-call.js';
import type { TurnEvent, TurnEventBody } from './events.js';
import { isoNow } from './timestamp.js';
import type { RequestTraceLabels } from './trace-labels.js';
import type { TurnControl } from './turn-control.js';
import type { DirectCall } from './turn-types.js';

/**
 * What an orchestrator records during one decision (see `StepRecorder`):
 * kept on the turn and taken by the engine when it records the step.
 */
export class DecisionNotes implements StepRecorder {
  hop = 0;
  notes: RouteStep[] | undefined;
  annotations: StepAnnotations | undefined;
  tokens: TokenUsage | undefined;
  /** Where streamed answer text goes (to the turn's events, when anyone logs or hears them). */
  answerSink: ((delta: string, reset: boolean) => void) | undefined;

  /** A profile a router asked for (`useProfile`), taken by the engine when it records the step. */
  profileName: string | undefined;

  profile(name: string): void {
    this.profileName = name;
  }

  stream(delta: string, reset = false): void {
    this.answerSink?.(delta, reset);
  }

  usage(usage: TokenUsage): void {
    this.tokens = addUsage(this.tokens, usage);
  }

  annotate(annotations: StepAnnotations): void {
    this.annotations = this.annotations ? { ...this.annotations, ...annotations } : { ...annotations };
  }

  note(label: string, annotations?: StepAnnotations): void {
    const step: RouteStep = {
      hop: this.hop,
      kind: 'note',
      calls: [],
      label,
      decidedAt: isoNow(),
      durationMs: 0,
    };
    if (annotations) step.annotations = { ...annotations };
    if (this.notes) this.notes.push(step);
    else this.notes = [step];
  }
}

/** Who and what a turn needs while it runs in this process. */
export interface TurnRuntime {
  /** The session store as the turn's tenant sees it. */
  sessions: SessionStore;
  /** The name of the API key the request came with, for traces. */
  keyName?: string;
  /** The session's idle time when its tenant has one of its own (ms). */
  idleTtlMs?: number;
  /** Where the request came in, for the trace's name. */
  entryPoint?: string;
  /** The trace name and tags the request asked for. */
  trace?: RequestTraceLabels;
  /**
   * The turn's last write ends this holder's use of the session, so the
   * store may release the lease with it (set for a new message's turn,
   * whose lease is released right after).
   */
  releaseWithLastWrite?: boolean;
  lease: SessionLease;
  control: TurnControl;
  requestContext: RequestContext;
  /** Who hears the turn's events as they happen (the request's stream), if anyone. */
  listener: ((event: TurnEvent) => void) | undefined;
  /**
   * Numbers the current part's events and sends them to the turn's event
   * log and to {@link listener} (set at the start of each part; undefined
   * when there is neither).
   */
  emit?: ((event: TurnEventBody) => void) | undefined;
}

/**
 * A turn while this process runs it: its stored record's fields, the
 * messages its orchestrator sees, and what it needs to write. The record is
 * written through the engine's one write point, as a fresh snapshot each
 * time (the store may keep what it is given).
 */
export class TurnState {
  readonly sessionId: string;
  readonly turnId: string;
  readonly userMessageId: string;
  readonly userText: string;
  readonly startedAt: string;
  status: TurnStatus;
  endedAt: string | undefined;
  readonly steps: RouteStep[];
  approvals: ApprovalRecord[] | undefined;
  traces: TracePart[] | undefined;
  traceId: string | undefined;
  error: { code: string; message: string } | undefined;
  recoveries: number | undefined;
  /** When the current part began (`TurnRecord.part`). */
  part: number | undefined;
  usage: TokenUsage | undefined;
  /** The user whose message started the turn (`TurnRecord.userId`). */
  userId: string | undefined;
  /** The window of earlier history followed by the whole turn so far. */
  messages: MessageItem[] = [];
  /** Index of the turn's user message in {@link messages}. */
  turnStart = 0;
  /** The replies to the previous decision, in call order. */
  lastResults: readonly ToolMessage[] = [];
  /** Decisions made so far (notes not counted). */
  hop = 0;
  /** Calls of the last stored step that have no stored reply (a resumed turn runs them first). */
  unanswered: ToolCall[] = [];
  /** The calls of the step {@link unanswered} belongs to, for the replies in call order. */
  unansweredStep: StepCall[] | undefined;
  /** Set when a periodic review escalated: why. The turn's answer then waits for a person's approval. */
  escalation: string | undefined;
  /** The limits of the turn's strategy profile, when the app uses profiles. */
  limits: TurnLimits | undefined;
  /** The live configuration's versions the turn started under, when any item was ever set. */
  configVersion: ConfigVersion | undefined;
  /** Set when the turn's answer waits for (or was given) a person's approval: that approval's id. */
  answerApprovalId: string | undefined;
  /** Set when the request named the agent to call: the orchestrator is not asked (see `TurnRequest.directCall`). */
  direct: DirectCall | undefined;
  /** Calls a `toolInput` guardrail blocked in this process, by call id: they reply with the refusal, never run. */
  blockedCalls: Map<string, GuardrailBlockedError> | undefined;
  /** Set once a write was sent: a store failure after it leaves the outcome unknown. */
  wrote = false;
  /** Writes sent but not yet waited for (see `write-batching.ts`). */
  unconfirmed: Promise<void> | undefined = undefined;
  /** Set when the store answered the turn's opening at once (no promise): held messages are written at once too. */
  storeAnswersAtOnce = false;
  /** Messages waiting to go with the turn's next write (see `hold` in `turn-machine.ts`). */
  held: MessageItem[] | undefined = undefined;
  /** Sends {@link held} on the next turn of the event loop, should no other write take them first. */
  heldFlush: ReturnType<typeof setImmediate> | undefined = undefined;
  readonly runtime: TurnRuntime;
  /** The span of the part of the turn this process runs. */
  span: Span | undefined;
  turnContext: Context | undefined;
  readonly recorder = new DecisionNotes();
  /** The id of the turn's answer message, made when the answer starts to stream (its deltas and its `message` event share it). */
  answerId: string | undefined;

  constructor(
    init: Pick<TurnRecord, 'turnId' | 'userMessageId' | 'startedAt' | 'status'> & {
      sessionId: string;
      userText: string;
      steps?: RouteStep[];
    },
    runtime: TurnRuntime,
  ) {
    this.sessionId = init.sessionId;
    this.turnId = init.turnId;
    this.userMessageId = init.userMessageId;
    this.userText = init.userText;
    this.startedAt = init.startedAt;
    this.status = init.status;
    this.steps = init.steps ?? [];
    this.runtime = runtime;
    this.recorder.answerSink = (delta, reset) => {
      const { emit } = this.runtime;
      if (!emit) return;
      if (this.answerId === undefined) this.answerId = createId('msg');
      const { sessionId, turnId, answerId: messageId } = this;
      emit(
        reset
          ? { type: 'answer-delta', sessionId, turnId, messageId, delta, reset, eventId: '' }
          : { type: 'answer-delta', sessionId, turnId, messageId, delta, eventId: '' },
      );
    };
  }

  /** The turn as stored: a fresh object, so later changes here never reach what a store kept. */
  snapshot(): TurnRecord {
    const { turnId, userMessageId, status, startedAt, endedAt, part } = this;
    const updatedAt = isoNow();
    const steps = this.steps.slice();
    // The fields most records have, in one literal of each shape: fields added afterwards take the record
    // an extra object (records are kept with their session, and written a few times a turn).
    const record: TurnRecord =
      part === undefined
        ? { turnId, userMessageId, status, startedAt, updatedAt, steps }
        : endedAt === undefined
          ? { turnId, userMessageId, status, startedAt, updatedAt, steps, part }
          : { turnId, userMessageId, status, startedAt, updatedAt, steps, endedAt, part };
    if (endedAt !== undefined && part === undefined) record.endedAt = endedAt;
    if (this.traceId !== undefined) record.traceId = this.traceId;
    if (this.traces) record.traces = this.traces.slice();
    if (this.error) record.error = this.error;
    if (this.approvals) record.approvals = this.approvals.map((approval) => ({ ...approval }));
    if (this.recoveries) record.recoveries = this.recoveries;
    if (this.usage) record.usage = this.usage;
    if (this.limits) record.profile = this.limits.profile;
    if (this.configVersion) record.configVersion = this.configVersion;
    if (this.userId !== undefined) record.userId = this.userId;
    return record;
  }

  /** The approval asked for `toolCallId`, if any. */
  approvalFor(toolCallId: string): ApprovalRecord | undefined {
    return this.approvals?.find((approval) => approval.toolCallId === toolCallId);
  }

  /** The turn's messages (from its user message on). */
  turnMessages(): MessageItem[] {
    return this.messages.slice(this.turnStart);
  }

  /** The stored replies to `calls`, in call order (calls without a reply are skipped). */
  repliesTo(calls: readonly StepCall[]): ToolMessage[] {
    const byCall = new Map<string, ToolMessage>();
    for (let index = this.turnStart; index < this.messages.length; index += 1) {
      const message = this.messages[index] as MessageItem;
      if (message.role === 'tool') byCall.set(message.toolCallId, message);
    }
    const replies: ToolMessage[] = [];
    for (const call of calls) {
      const reply = byCall.get(call.toolCallId);
      if (reply) replies.push(reply);
    }
    return replies;
  }

  /**
   * Rebuilds a stored turn: `history` is the session's messages (at least
   * up to the turn's user message and everything after it), `window` the
   * number of earlier messages the orchestrator sees. Works out where the
   * turn stands: its hop count, and the calls of its last step that have no
   * reply yet (they run first when it resumes).
   */
  static fromRecord(
    sessionId: string,
    record: TurnRecord,
    history: readonly MessageItem[],
    window: number,
    runtime: TurnRuntime,
  ): TurnState | undefined {
    let index = history.length - 1;
    while (index >= 0 && history[index]?.id !== record.userMessageId) index -= 1;
    const user = history[index];
    if (!user) return undefined;
    const state = new TurnState(
      {
        sessionId,
        turnId: record.turnId,
        userMessageId: record.userMessageId,
        startedAt: record.startedAt,
        status: record.status,
        userText: user.content,
        steps: record.steps.slice(),
      },
      runtime,
    );
    state.approvals = record.approvals?.map((approval) => ({ ...approval }));
    state.traces = record.traces?.slice();
    state.traceId = record.traceId;
    state.recoveries = record.recoveries;
    state.part = record.part;
    state.usage = record.usage;
    state.userId = record.userId;
    state.configVersion = record.configVersion;
    const from = Math.max(0, index - window);
    state.messages = history.slice(from);
    state.turnStart = index - from;
    state.hop = record.steps.filter((step) => step.kind !== 'note').length;
    const escalated = record.steps.find(
      (step) => step.label === 'review' && step.annotations?.verdict === 'escalate',
    );
    state.direct = directCallOf(record.steps);
    if (escalated) state.escalation = String(escalated.annotations?.reason ?? 'a review escalated');
    const final = record.steps.at(-1);
    if (final?.kind === 'answer' && final.calls[0]?.approvalId !== undefined) {
      // The answer waits (or waited) for a person: it is delivered, or refused, once that is decided.
      state.answerApprovalId = final.calls[0].approvalId;
    }
    const last = record.steps.findLast((step) => step.kind === 'call' || step.kind === 'fan-out');
    if (last) {
      const answered = new Set(state.repliesTo(last.calls).map((reply) => reply.toolCallId));
      state.unanswered = last.calls.filter((call) => !answered.has(call.toolCallId)).map(callOfStep);
      state.unansweredStep = last.calls;
      if (state.unanswered.length === 0) state.lastResults = state.repliesTo(last.calls);
    }
    return state;
  }
}

/** The `ToolCall` a stored step call was made from. */
function callOfStep(call: StepCall): ToolCall {
  const toolCall: ToolCall = { id: call.toolCallId, toolName: call.agent, message: call.message ?? '' };
  if (call.input !== undefined) toolCall.input = call.input;
  if (call.thought !== undefined) toolCall.thought = call.thought;
  if (call.reason !== undefined) toolCall.reason = call.reason;
  if (call.timeoutMs !== undefined) toolCall.timeoutMs = call.timeoutMs;
  if (call.fanInGraceMs !== undefined) toolCall.fanInGraceMs = call.fanInGraceMs;
  return toolCall;
}

/** `total` plus `usage` (a new object; `total` may be undefined). */
export function addUsage(total: TokenUsage | undefined, usage: TokenUsage): TokenUsage {
  return {
    inputTokens: (total?.inputTokens ?? 0) + usage.inputTokens,
    outputTokens: (total?.outputTokens ?? 0) + usage.outputTokens,
  };
}

/** The token usage an agent reported on its reply (`metadata.usage`), if it is well formed. */
export function usageOf(message: { metadata?: Record<string, unknown> }): TokenUsage | undefined {
  const usage = message.metadata?.usage as Partial<TokenUsage> | undefined;
  if (typeof usage?.inputTokens !== 'number' || typeof usage.outputTokens !== 'number') return undefined;
  return { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens };
}
