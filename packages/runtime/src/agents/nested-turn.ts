import { type Context, context as otelContext } from '@opentelemetry/api';
import {
  AgentError,
  type Conversation,
  createId,
  type Decision,
  type ErrorMessage,
  MaxHopsExceededError,
  type MessageItem,
  type Orchestrator,
  RequestContext,
  type ToolCall,
  type ToolMessage,
} from '@switchboard/core';
import { orchestratorReply } from '../engine/agent-failure.js';
import { isPausedCall, runAgentCall } from '../engine/agent-runner.js';
import { callStreamOf } from '../engine/call-context.js';
import type { TurnEventBody } from '../engine/events.js';
import { FanIn } from '../engine/fan-in.js';
import { runSteps, type Steps } from '../engine/steps.js';
import { isoNow } from '../engine/timestamp.js';
import { TurnControl } from '../engine/turn-control.js';
import { hops, type LoopHost, type LoopTurn } from '../engine/turn-loop.js';
import { type NextStep, RUN_AGAIN } from '../engine/turn-machine.js';
import { DecisionNotes } from '../engine/turn-state.js';
import type { InnerStep } from '../turns/turn-record.js';
import type { Agent, AgentContext, AgentReplyWithMetadata } from './agent-contract.js';

/** A nested call that would go deeper than its orchestrator agent's `maxDepth`. */
export class NestingDepthError extends AgentError {
  override readonly code = 'nesting_depth_exceeded';
  readonly depth: number;
  readonly maxDepth: number;
  constructor({ agent, depth, maxDepth }: { agent: string; depth: number; maxDepth: number }) {
    super({
      agent,
      message: `nesting depth ${depth} exceeds maxDepth ${maxDepth} (orchestrator agents calling orchestrator agents)`,
    });
    this.depth = depth;
    this.maxDepth = maxDepth;
  }
}

/**
 * The nesting depth of the conversations this module builds. The runtime
 * hands an agent the conversation it was called from, so a nested
 * orchestrator agent finds its depth there; the app's own conversations are
 * depth 0.
 */
const depths = new WeakMap<Conversation, number>();

/**
 * The nesting depth of the loop that made `conversation`: 0 for an app's turn
 * on a client's request; a request from another server's `remoteAgent`
 * starts at that server's depth plus one (`RequestContext.depth`).
 */
export function nestingDepth(conversation: Conversation): number {
  return depths.get(conversation) ?? RequestContext.tryCurrent()?.depth ?? 0;
}

/** Records what the inner orchestrator notes during one decision, for the inner steps. */
class InnerRecorder extends DecisionNotes {
  /** Moves what was recorded for this decision onto `steps`, then `step` itself. */
  flush(steps: InnerStep[], step: InnerStep): void {
    if (this.notes) steps.push(...(this.notes as InnerStep[]));
    this.notes = undefined;
    if (this.annotations) step.annotations = this.annotations;
    if (this.tokens) step.usage = this.tokens;
    this.annotations = undefined;
    this.tokens = undefined;
    steps.push(step);
  }
}

/** An inner call that paused for approval: nested turns cannot pause, so it fails (and nothing runs). */
function pausedReply(call: ToolCall): ToolMessage {
  return {
    id: createId('msg'),
    role: 'tool',
    name: call.toolName,
    toolCallId: call.id,
    content: `Agent '${call.toolName}' needs a person's approval, which a nested orchestrator cannot ask for`,
    status: 'error',
    createdAt: isoNow(),
    metadata: { errorCode: 'approval_not_supported' },
  };
}

/** What an orchestrator agent's nested turns run with (its options, resolved once). */
export interface NestedSettings {
  name: string;
  orchestrator: Orchestrator;
  byName: ReadonlyMap<string, Agent>;
  maxHops: number;
  maxDepth: number;
  agentTimeoutMs: number;
  exposeErrorDetails: boolean;
}

/**
 * Runs one call of an orchestrator agent as a nested turn: the task as its
 * user message, then the engine's loop over the inner orchestrator and agents.
 */
export async function runNested(
  settings: NestedSettings,
  task: string,
  context: AgentContext,
): Promise<AgentReplyWithMetadata> {
  const { name, maxDepth } = settings;
  const depth = nestingDepth(context.conversation) + 1;
  if (depth > maxDepth) throw new NestingDepthError({ agent: name, depth, maxDepth });
  const { signal } = context;
  const nested = new NestedTurn(settings, task, context, depth);
  // Inner calls follow this call's signal: its timeout, a cancel or shutdown aborts them all.
  const stop = () => nested.control.stop(signal.reason);
  if (signal.aborted) stop();
  else signal.addEventListener('abort', stop, { once: true });
  try {
    const outcome = await runSteps(hops(nested, nested, otelContext.active()));
    return { content: outcome.status === 'completed' ? outcome.reply : '', metadata: nested.metadata() };
  } finally {
    signal.removeEventListener('abort', stop);
  }
}

/**
 * One call of an orchestrator agent: a nested turn that the engine's loop
 * ({@link hops}) runs, kept in this process only. Its inner calls run
 * concurrently; an error decision or running out of hops fails the call
 * (thrown, with the inner steps so far); a call that would pause fails.
 */
class NestedTurn implements LoopHost<NestedTurn>, LoopTurn {
  hop = 0;
  readonly recorder = new InnerRecorder();
  readonly control: TurnControl;
  readonly orchestrator: Orchestrator;
  readonly candidates: readonly string[];
  readonly exposeErrorDetails: boolean;
  readonly #settings: NestedSettings;
  readonly #context: AgentContext;
  readonly #depth: number;
  readonly #messages: MessageItem[];
  readonly #steps: InnerStep[] = [];
  readonly #emit: ((event: TurnEventBody) => void) | undefined;
  #lastResults: readonly ToolMessage[] = [];

  constructor(settings: NestedSettings, task: string, context: AgentContext, depth: number) {
    this.#settings = settings;
    this.#context = context;
    this.#depth = depth;
    this.orchestrator = settings.orchestrator;
    this.candidates = settings.orchestrator.agents.map((agent) => agent.name);
    this.exposeErrorDetails = settings.exposeErrorDetails;
    this.control = new TurnControl(context.request.sessionId, context.signal);
    this.#messages = [{ id: createId('msg'), role: 'user', content: task, createdAt: isoNow() }];
    // A streamed turn sees the inner calls' events too, each marked with the call to this agent.
    const stream = callStreamOf(context);
    this.#emit =
      stream &&
      ((event: TurnEventBody) =>
        stream.emit(
          event.type === 'agent-start' || event.type === 'agent-delta' || event.type === 'agent-end'
            ? markedWith(event, stream.toolCallId)
            : event,
        ));
  }

  /** What the reply (or a failure) carries: the orchestrator, the depth, the inner steps so far. */
  metadata(): Record<string, unknown> {
    return { orchestrator: this.orchestrator.name, depth: this.#depth, innerSteps: this.#steps };
  }

  maxHops(): number {
    return this.#settings.maxHops;
  }

  stopped(): undefined {
    const { signal } = this.#context;
    if (signal.aborted) throw signal.reason;
    return undefined;
  }

  limit(_turn: NestedTurn, maxHops: number): never {
    throw new AgentError({
      agent: this.#settings.name,
      message: `its orchestrator '${this.orchestrator.name}' did not answer within ${maxHops} hops (maxHops)`,
      cause: new MaxHopsExceededError({ maxHops }),
      metadata: this.metadata(),
    });
  }

  conversation(_turn: NestedTurn, hop: number): Conversation {
    const conversation: Conversation = {
      sessionId: this.#context.conversation.sessionId,
      turnId: this.#context.conversation.turnId,
      messages: [...this.#messages],
      turnStart: 0,
      hop,
      agents: this.orchestrator.agents,
      lastResults: this.#lastResults,
      recorder: this.recorder,
      steps: this.#steps,
    };
    depths.set(conversation, this.#depth);
    return conversation;
  }

  owner(): { sessionId: string; userId?: string } {
    const { request } = this.#context;
    return request.userId
      ? { sessionId: request.sessionId, userId: request.userId }
      : { sessionId: request.sessionId };
  }

  direct(): undefined {
    return undefined;
  }

  applyRules(_turn: NestedTurn, decision: Decision): Decision {
    return decision;
  }

  record(_turn: NestedTurn, step: InnerStep): void {
    this.recorder.flush(this.#steps, step);
  }

  failed(_turn: NestedTurn, decision: ErrorMessage): never {
    throw new AgentError({
      agent: this.#settings.name,
      message: `its orchestrator '${this.orchestrator.name}' failed: ${decision.error.message}`,
      cause: decision.error,
      metadata: this.metadata(),
    });
  }

  answer(_turn: NestedTurn, answer: ToolCall): NextStep {
    return { status: 'completed', reply: answer.message, toolCallId: answer.id };
  }

  /** Runs the inner calls concurrently; each reply is an error message rather than a throw, as in a turn. */
  *run(
    _turn: NestedTurn,
    calls: readonly ToolCall[],
    conversation: Conversation,
    decisionContext: Context,
    step: InnerStep,
  ): Steps<NextStep> {
    const { byName, agentTimeoutMs, exposeErrorDetails } = this.#settings;
    const fanIn =
      calls.length > 1 && calls.some((call) => call.fanInGraceMs !== undefined) ? new FanIn() : undefined;
    const replies = (yield Promise.all(
      calls.map(async (call) => {
        const agent = byName.get(call.toolName) as Agent;
        const timeoutMs = agent.timeoutMs ?? agentTimeoutMs;
        const outcome = await runAgentCall({
          agent,
          call,
          conversation,
          request: this.#context.request,
          parent: decisionContext,
          timeoutMs: call.timeoutMs === undefined ? timeoutMs : Math.min(timeoutMs, call.timeoutMs),
          control: this.control,
          emit: this.#emit,
          exposeErrorDetails,
          fanIn,
          correlationId: step.annotations?.correlationId,
        });
        return isPausedCall(outcome) ? pausedReply(call) : outcome;
      }),
    )) as ToolMessage[];
    this.stopped();
    replies.forEach((reply, index) => {
      const summary = step.calls[index];
      if (!summary) return;
      summary.status = reply.status;
      const code = reply.status === 'error' ? reply.metadata?.errorCode : undefined;
      if (typeof code === 'string') summary.errorCode = code;
      const nested = reply.metadata?.innerSteps;
      if (Array.isArray(nested)) summary.innerSteps = nested as InnerStep[];
    });
    this.#messages.push(...replies);
    this.#lastResults = replies.map(orchestratorReply);
    return RUN_AGAIN;
  }
}

/** An inner call's event marked with the outer call's id (its numbering's `eventId` kept last, as the engine builds events). */
function markedWith(
  event: Extract<TurnEventBody, { type: 'agent-start' | 'agent-delta' | 'agent-end' }>,
  toolCallId: string,
): TurnEventBody {
  const { eventId: _unnumbered, ...rest } = event;
  return { ...rest, parentToolCallId: event.parentToolCallId ?? toolCallId, eventId: '' };
}
