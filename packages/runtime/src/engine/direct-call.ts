import {
  AgentError,
  type Conversation,
  currentUserMessage,
  type Decision,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import type { RouteStep } from '../turns/turn-record.js';
import type { DirectCall } from './turn-types.js';

/** The `reason` of the call step a direct call records. */
export const DIRECT_CALL_REASON = 'direct call: the request named this agent';

/** A directly called agent that failed: the turn fails with the agent's error code. */
export class DirectCallError extends AgentError {
  override readonly code: string;
  constructor({ agent, code, detail }: { agent: string; code: string; detail: string }) {
    super({ agent, message: detail });
    this.code = code;
  }
}

/**
 * The decision of a turn that calls one agent directly, made in place of
 * the orchestrator's: first the call (the user message as its task, the
 * request's `input`), annotated `directCall` so that a resumed turn knows,
 * then the agent's reply as the answer (a failed reply fails the turn).
 */
export function directDecision(direct: DirectCall, conversation: Conversation): Decision {
  const { agent } = direct;
  if (conversation.hop === 0) {
    conversation.recorder?.annotate({ directCall: agent });
    const message = currentUserMessage(conversation).content;
    if (direct.input === undefined) return toolCall(agent, message, { reason: DIRECT_CALL_REASON });
    // The message is the input as JSON, as the input guardrails let it through: the agent gets what they
    // let through (a redaction included), never the raw input beside it.
    const input = guardedInput(message, direct.input);
    if (input === undefined)
      return {
        error: new DirectCallError({
          agent,
          code: 'invalid_input',
          detail: 'the input guardrails changed the input so that it is no longer JSON',
        }),
      };
    return toolCall(agent, message, { input, reason: DIRECT_CALL_REASON });
  }
  const reply = conversation.lastResults?.find((result) => result.name === agent);
  if (reply?.status === 'ok') return routeToUser(reply.content, { reason: `the reply of ${agent}` });
  const metadata = reply?.metadata ?? {};
  return {
    error: new DirectCallError({
      agent,
      code: typeof metadata.errorCode === 'string' ? metadata.errorCode : 'agent_error',
      detail:
        typeof metadata.errorDetail === 'string'
          ? metadata.errorDetail
          : (reply?.content ?? 'it did not reply'),
    }),
  };
}

/** The structured input as the stored message carries it: unchanged, or as a guardrail rewrote its JSON. */
function guardedInput(message: string, input: unknown): unknown {
  if (message === JSON.stringify(input)) return input;
  try {
    return JSON.parse(message);
  } catch {
    return undefined;
  }
}

/** The direct call a stored turn was made for (its first decision says so), to resume it as one. */
export function directCallOf(steps: readonly RouteStep[]): DirectCall | undefined {
  const first = steps.find((step) => step.kind !== 'note');
  const agent = first?.annotations?.directCall;
  return typeof agent === 'string' ? { agent } : undefined;
}
