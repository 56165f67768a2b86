import { AgentError } from './agent-error.js';

/** An agent did not finish within its timeout. */
export class AgentTimeoutError extends AgentError {
  override readonly code = 'agent_timeout';
  readonly timeoutMs: number;
  /** True when the call ran past its fan-in grace period (`ToolCall.fanInGraceMs`) rather than its deadline. */
  readonly fanInGrace: boolean;
  constructor({
    agent,
    timeoutMs,
    fanInGrace = false,
  }: { agent: string; timeoutMs: number; fanInGrace?: boolean }) {
    super({
      agent,
      message: fanInGrace
        ? `did not reply within ${timeoutMs} ms of a sibling's reply (its fan-in grace period)`
        : `timed out after ${timeoutMs} ms`,
    });
    this.timeoutMs = timeoutMs;
    this.fanInGrace = fanInGrace;
  }

  /** A timeout is worth another try (the grace period of a fan-in is not: its siblings have answered). */
  override get retryable(): boolean {
    return !this.fanInGrace;
  }
}
