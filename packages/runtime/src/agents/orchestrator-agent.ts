import { context as otelContext } from '@opentelemetry/api';
import {
  AgentError,
  ConfigurationError,
  type Conversation,
  createId,
  type Decision,
  isErrorMessage,
  isRouteToUser,
  MaxHopsExceededError,
  type MessageItem,
  type Orchestrator,
  OrchestratorError,
  RequestContext,
  type ToolCall,
  type ToolMessage,
  validateDecision,
} from '@switchboard/core';
import { orchestratorReply } from '../engine/agent-failure.js';
import { isPausedCall, runAgentCall } from '../engine/agent-runner.js';
import { callStreamOf } from '../engine/call-context.js';
import type { TurnEvent } from '../engine/events.js';
import { FanIn } from '../engine/fan-in.js';
import { toRouteStep } from '../engine/route-step.js';
import { isoNow } from '../engine/timestamp.js';
import { withSpan } from '../engine/trace-context.js';
import { TurnControl } from '../engine/turn-control.js';
import { DecisionNotes } from '../engine/turn-state.js';
import { endDecisionSpan, startDecisionSpan } from '../tracing/spans.js';
import type { InnerStep } from '../turns/turn-record.js';
import { type Agent, type AgentContext, type AgentReplyWithMetadata, defineAgent } from './agent.js';

/** Options of {@link orchestratorAgent}. */
export interface OrchestratorAgentOptions {
  name: string;
  description: string;
  /** Decides the nested turn; every agent it names must be in {@link agents}. */
  orchestrator: Orchestrator;
  /** The agents the inner orchestrator routes to. */
  agents: readonly Agent[];
  /** The most decisions of the nested turn (default 10); past it the call fails. */
  maxHops?: number;
  /**
   * The deepest nesting allowed (default 3): a turn of the app is depth 0, the
   * loop of an orchestrator agent it calls depth 1, and so on. A call that
   * would go deeper fails with a {@link NestingDepthError}.
   */
  maxDepth?: number;
  /** The timeout of an inner agent without its own `timeoutMs` (default 60 000 ms, the app's default). */
  agentTimeoutMs?: number;
  /** Overrides the app's per-agent timeout for the whole nested turn. */
  timeoutMs?: number;
  keywords?: string[];
  capabilities?: string[];
  /** Keep inner failures' own text in the inner replies and steps (as the app's `exposeErrorDetails`). */
  exposeErrorDetails?: boolean;
}

export type { InnerStep, InnerStepCall } from '../turns/turn-record.js';

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

/** Fails fast on an inner orchestrator that names agents the orchestrator agent does not have. */
function agentsByName(
  name: string,
  orchestrator: Orchestrator,
  agents: readonly Agent[],
): Map<string, Agent> {
  const byName = new Map<string, Agent>();
  for (const agent of agents) {
    if (byName.has(agent.name)) {
      throw new ConfigurationError({
        message: `Orchestrator agent '${name}' has two agents named '${agent.name}'; agent names must be unique`,
      });
    }
    byName.set(agent.name, agent);
  }
  const missing = orchestrator.agents.filter((meta) => !byName.has(meta.name)).map((meta) => meta.name);
  if (missing.length > 0) {
    throw new ConfigurationError({
      message: `Orchestrator agent '${name}': its orchestrator '${orchestrator.name}' routes to ${missing.map((m) => `'${m}'`).join(', ')}, missing from its agents`,
    });
  }
  return byName;
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

/**
 * Makes an orchestrator and its agents one agent of another orchestrator:
 * a call runs a nested turn (the task as its user message, then the inner
 * agents' replies) and answers with the inner `route_to_user` message.
 * Nothing of the nested turn is stored in the session's messages: its steps
 * (each inner call with its status, and a failed one's error code) are kept
 * under the outer call in the turn's steps (`StepCall.innerSteps`) and in the
 * reply's `metadata.innerSteps`, also when the nested turn fails; its
 * decisions and agent calls are traced under this agent's span; when the
 * turn is streamed, the inner agents' events are streamed too, marked with
 * the outer call's id (`parentToolCallId`). Inner fan-outs run concurrently;
 * inner agents are aborted with this call (its timeout, a cancel,
 * shutdown). An inner error decision or running out of hops fails the call;
 * going deeper than `maxDepth` fails it with a {@link NestingDepthError}.
 *
 * @example
 * ```ts
 * const research = orchestratorAgent({
 *   name: 'research',
 *   description: 'Finds and summarises sources',
 *   orchestrator: new LLMOrchestrator({ name: 'research-team', agents: [search, summarise].map(agentMeta) }),
 *   agents: [search, summarise],
 * });
 * app.mount(new KeywordOrchestrator({ name: 'front', agents: [research, billing].map(agentMeta) }));
 * ```
 */
export function orchestratorAgent({
  name,
  description,
  orchestrator,
  agents,
  maxHops = 10,
  maxDepth = 3,
  agentTimeoutMs = 60_000,
  exposeErrorDetails = false,
  ...meta
}: OrchestratorAgentOptions): Agent {
  if (!(Number.isInteger(maxDepth) && maxDepth >= 1)) {
    throw new ConfigurationError({
      message: `Orchestrator agent '${name}': maxDepth must be an integer ≥ 1`,
    });
  }
  if (!(Number.isInteger(maxHops) && maxHops >= 1)) {
    throw new ConfigurationError({ message: `Orchestrator agent '${name}': maxHops must be an integer ≥ 1` });
  }
  const byName = agentsByName(name, orchestrator, agents);
  const settings = { name, orchestrator, byName, maxHops, maxDepth, agentTimeoutMs, exposeErrorDetails };
  return defineAgent({
    name,
    description,
    ...meta,
    run: (message, context) => runNested(settings, message, context),
  });
}

interface NestedSettings {
  name: string;
  orchestrator: Orchestrator;
  byName: ReadonlyMap<string, Agent>;
  maxHops: number;
  maxDepth: number;
  agentTimeoutMs: number;
  exposeErrorDetails: boolean;
}

async function runNested(
  settings: NestedSettings,
  task: string,
  context: AgentContext,
): Promise<AgentReplyWithMetadata> {
  const { name, orchestrator, maxHops, maxDepth } = settings;
  const depth = nestingDepth(context.conversation) + 1;
  if (depth > maxDepth) throw new NestingDepthError({ agent: name, depth, maxDepth });

  const { signal, request } = context;
  // Inner calls follow this call's signal: its timeout, a cancel or shutdown aborts them all.
  const control = new TurnControl(request.sessionId, signal);
  const stop = () => control.stop(signal.reason);
  if (signal.aborted) stop();
  else signal.addEventListener('abort', stop, { once: true });

  const parent = otelContext.active();
  const messages: MessageItem[] = [{ id: createId('msg'), role: 'user', content: task, createdAt: isoNow() }];
  const steps: InnerStep[] = [];
  const recorder = new InnerRecorder();
  // A streamed turn sees the inner calls' events too, each marked with the call to this agent.
  const stream = callStreamOf(context);
  const emit =
    stream &&
    ((event: TurnEvent) =>
      stream.emit(
        event.type === 'agent-start' || event.type === 'agent-delta' || event.type === 'agent-end'
          ? { ...event, parentToolCallId: event.parentToolCallId ?? stream.toolCallId }
          : event,
      ));
  let lastResults: readonly ToolMessage[] = [];
  try {
    for (let hop = 0; hop < maxHops; hop += 1) {
      if (signal.aborted) throw signal.reason;
      recorder.hop = hop;
      const conversation: Conversation = {
        sessionId: context.conversation.sessionId,
        turnId: context.conversation.turnId,
        messages: [...messages],
        turnStart: 0,
        hop,
        agents: orchestrator.agents,
        lastResults,
        recorder,
      };
      depths.set(conversation, depth);

      const decisionSpan = startDecisionSpan(parent, {
        orchestrator: orchestrator.name,
        hop,
        candidates: orchestrator.agents.map((agent) => agent.name),
        sessionId: request.sessionId,
        ...(request.userId ? { userId: request.userId } : {}),
      });
      const decisionContext = withSpan(parent, decisionSpan);
      const startedAt = performance.now();
      let decision: Decision;
      try {
        const pending = otelContext.with(decisionContext, () => orchestrator.decide(conversation));
        decision = validateDecision(await pending, conversation.agents);
      } catch (error) {
        decision = { error: new OrchestratorError({ orchestrator: orchestrator.name, cause: error }) };
      }
      const step: InnerStep = toRouteStep(hop, decision, startedAt, settings.exposeErrorDetails);
      // Open over the inner calls it made, as in a turn: every agent span lies inside its decision's.
      endDecisionSpan(decisionSpan, decision, recorder, { end: false, durationMs: step.durationMs });
      recorder.flush(steps, step);
      try {
        if (isErrorMessage(decision)) {
          throw new AgentError({
            agent: name,
            message: `its orchestrator '${orchestrator.name}' failed: ${decision.error.message}`,
            cause: decision.error,
            metadata: { orchestrator: orchestrator.name, depth, innerSteps: steps },
          });
        }
        const calls = Array.isArray(decision) ? decision : [decision];
        const first = calls[0] as ToolCall;
        if (isRouteToUser(first)) {
          return {
            content: first.message,
            metadata: { orchestrator: orchestrator.name, depth, innerSteps: steps },
          };
        }

        // Inner calls run concurrently; each reply is an error message rather than a throw, as in a turn.
        const fanIn =
          calls.length > 1 && calls.some((call) => call.fanInGraceMs !== undefined) ? new FanIn() : undefined;
        const replies = await Promise.all(
          calls.map(async (call) => {
            const agent = settings.byName.get(call.toolName) as Agent;
            const timeoutMs = agent.timeoutMs ?? settings.agentTimeoutMs;
            const outcome = await runAgentCall({
              agent,
              call,
              conversation,
              request,
              parent: decisionContext,
              timeoutMs: call.timeoutMs === undefined ? timeoutMs : Math.min(timeoutMs, call.timeoutMs),
              control,
              emit,
              exposeErrorDetails: settings.exposeErrorDetails,
              fanIn,
              correlationId: step.annotations?.correlationId,
            });
            return isPausedCall(outcome) ? pausedReply(call) : outcome;
          }),
        );
        if (signal.aborted) throw signal.reason;
        replies.forEach((reply, index) => {
          const summary = step.calls[index];
          if (!summary) return;
          summary.status = reply.status;
          const code = reply.status === 'error' ? reply.metadata?.errorCode : undefined;
          if (typeof code === 'string') summary.errorCode = code;
          const nested = reply.metadata?.innerSteps;
          if (Array.isArray(nested)) summary.innerSteps = nested as InnerStep[];
        });
        messages.push(...replies);
        lastResults = replies.map(orchestratorReply);
      } finally {
        decisionSpan.end();
      }
    }
  } finally {
    signal.removeEventListener('abort', stop);
  }
  throw new AgentError({
    agent: name,
    message: `its orchestrator '${orchestrator.name}' did not answer within ${maxHops} hops (maxHops)`,
    cause: new MaxHopsExceededError({ maxHops }),
    metadata: { orchestrator: orchestrator.name, depth, innerSteps: steps },
  });
}
