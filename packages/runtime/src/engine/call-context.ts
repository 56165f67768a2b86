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

const callStreams = new WeakMap<AgentContext, CallStream>();

/** Sends the events of the calls an agent makes (an orchestrator agent's) to `stream`. */
export function setCallStream(context: AgentContext, stream: CallStream): void {
  callStreams.set(context, stream);
}

/**
 * The event stream of the call an agent is running, when the turn is
 * streamed: an orchestrator agent sends its inner calls' events there,
 * marked with this call's id as their `parentToolCallId`.
 */
export function callStreamOf(context: AgentContext): CallStream | undefined {
  return callStreams.get(context);
}

/** What the agent sees of its call; the abort signal is made only when the agent reads it. */
export class CallContext implements AgentContext {
  readonly toolCall: ToolCall;
  readonly conversation: Conversation;
  readonly request: RequestContext;
  readonly resume?: AgentResume;
  readonly #abort: AgentAbort;

  constructor(
    call: ToolCall,
    conversation: Conversation,
    request: RequestContext,
    abort: AgentAbort,
    resume: AgentResume | undefined,
  ) {
    this.toolCall = call;
    this.conversation = conversation;
    this.request = request;
    this.#abort = abort;
    if (resume) this.resume = resume;
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get idempotencyKey(): string {
    return `${this.conversation.turnId}/${this.toolCall.id}`;
  }
}
