import { describeError } from './describe-error.js';
import { SystemError } from './system-error.js';

/** An agent threw or failed. */
export class AgentError extends SystemError {
  readonly code: string = 'agent_error';
  readonly agent: string;
  /**
   * Kept on the failed call's `tool` message (`metadata`), beside its
   * `errorCode`: what the agent did before it failed (an orchestrator agent's
   * inner steps), for the session's history. Never the error's own text.
   */
  readonly metadata?: Record<string, unknown>;
  readonly #retryable: boolean;
  constructor({
    agent,
    message,
    cause,
    metadata,
    retryable,
  }: {
    agent: string;
    message?: string;
    cause?: unknown;
    metadata?: Record<string, unknown>;
    /** Default: the cause's own `retryable` (an error an agent throws may set it), else false. */
    retryable?: boolean;
  }) {
    super({ message: `Agent '${agent}' failed: ${message ?? describeError(cause)}`, cause });
    this.agent = agent;
    if (metadata) this.metadata = metadata;
    this.#retryable =
      retryable ??
      (typeof cause === 'object' && cause !== null && (cause as { retryable?: unknown }).retryable === true);
  }

  /** As the constructor's `retryable` option says, else as the cause's own `retryable` (an error an agent throws may set it). */
  override get retryable(): boolean {
    return this.#retryable;
  }
}
