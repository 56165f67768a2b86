import type { Conversation, RequestContext, ToolCall } from '@switchboard/core';
import type { AgentContext } from '../agents/agent-contract.js';
import type { AgentResume } from '../agents/agent-pause.js';
import type { AgentAbort } from './agent-abort.js';
import type { TurnEventBody } from './events.js';

/** Where an agent call's events go, for an agent that runs calls of its own (an orchestrator agent). */
export interface CallStream {
  emit: (event: TurnEventBody) => void;
  toolCallId: string;
}

/**
 * The event stream of the call an agent is running, when the turn is
 * streamed: an orchestrator agent sends its inner calls' events there,
 * marked with this call's id as their `parentToolCallId`.
 */
export function callStreamOf(context: AgentContext): CallStream | undefined {
  return CallContext.streamOf(context);
}

/** What the agent sees of its call; the abort signal is made only when the agent reads it. */
export class CallContext implements AgentContext {
  readonly toolCall: ToolCall;
  readonly conversation: Conversation;
  readonly request: RequestContext;
  readonly resume?: AgentResume;
  readonly #abort: AgentAbort;
  /** Where the call's events go when the turn is streamed (see {@link callStreamOf}). */
  readonly #emit: CallStream['emit'] | undefined;

  constructor(
    call: ToolCall,
    conversation: Conversation,
    request: RequestContext,
    abort: AgentAbort,
    resume: AgentResume | undefined,
    emit?: CallStream['emit'],
  ) {
    this.toolCall = call;
    this.conversation = conversation;
    this.request = request;
    this.#abort = abort;
    this.#emit = emit;
    if (resume) this.resume = resume;
  }

  /** The stream of a call's context made here (none for any other context, or when nobody listens). */
  static streamOf(context: AgentContext): CallStream | undefined {
    if (!(#emit in context) || context.#emit === undefined) return undefined;
    return { emit: context.#emit, toolCallId: context.toolCall.id };
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get idempotencyKey(): string {
    return `${this.conversation.turnId}/${this.toolCall.id}`;
  }
}
