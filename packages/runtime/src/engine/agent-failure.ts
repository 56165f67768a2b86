import {
  AgentError,
  AgentStoppedError,
  AgentTimeoutError,
  ServerShutdownError,
  type ToolMessage,
  UserError,
} from '@switchboard/core';

/** The error of a failed agent call, as an `AgentError` (a server shutdown becomes `agent_stopped`). */
export function toAgentError(agent: string, error: unknown): AgentError {
  if (AgentError.isInstance(error)) return error as AgentError;
  if (ServerShutdownError.isInstance(error)) return new AgentStoppedError({ agent, cause: error });
  return new AgentError({ agent, cause: error });
}

/**
 * What clients may see of a failed call: the agent, what happened and the
 * error code, plus the message of a `UserError` the agent threw (written for
 * the user). The error's own text can hold secrets or internal URLs.
 */
export function describeFailure(agent: string, failure: AgentError): string {
  if (AgentTimeoutError.isInstance(failure)) {
    const { timeoutMs, code, fanInGrace } = failure as AgentTimeoutError;
    return fanInGrace
      ? `Agent '${agent}' did not reply within ${timeoutMs} ms of the first reply of its fan-out (${code})`
      : `Agent '${agent}' timed out after ${timeoutMs} ms (${code})`;
  }
  if (AgentStoppedError.isInstance(failure))
    return `Agent '${agent}' was stopped: the server shut down (${failure.code})`;
  const description = `Agent '${agent}' failed (${failure.code})`;
  return UserError.isInstance(failure.cause)
    ? `${description}: ${(failure.cause as Error).message}`
    : description;
}

/** What the orchestrator's copy of a reply adds to its metadata, keyed by the reply that is stored and streamed. */
const replyNotes = new WeakMap<ToolMessage, { errorDetail?: string; durationMs?: number }>();

/** Notes on `reply` for the orchestrator's copy: a failure's own text (`errorDetail`), the call's `durationMs`. */
export function noteReply(reply: ToolMessage, note: { errorDetail?: string; durationMs?: number }): void {
  const earlier = replyNotes.get(reply);
  replyNotes.set(reply, earlier === undefined ? note : { ...earlier, ...note });
}

/** Keeps the orchestrator's copy of a failed `reply`, whose `metadata.errorDetail` is the error's own text. */
export function keepDetail(reply: ToolMessage, detail: string): void {
  noteReply(reply, { errorDetail: detail });
}

/**
 * The reply as the orchestrator is handed it: a copy whose metadata holds
 * the call's `durationMs` (a breaker's latency stats) and, for a failed
 * call, `errorDetail`, the error's own text, since a router must know what
 * went wrong. The copy stays in this process: it is never stored or
 * streamed (the reply itself carries a safe description).
 */
export function orchestratorReply(reply: ToolMessage): ToolMessage {
  const note = replyNotes.get(reply);
  return note ? { ...reply, metadata: { ...reply.metadata, ...note } } : reply;
}
