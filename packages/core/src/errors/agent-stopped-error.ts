import { AgentError } from './agent-error.js';

/**
 * An agent call the server stopped because it shut down (its grace period
 * for running turns was over). The orchestrator gets it as the call's
 * reply, `Agent '<name>' was stopped: the server shut down (agent_stopped)`,
 * and decides what the user reads; it is not retried.
 */
export class AgentStoppedError extends AgentError {
  override readonly code = 'agent_stopped';
  constructor({ agent, cause }: { agent: string; cause?: unknown }) {
    super({ agent, message: 'stopped: the server shut down', cause, retryable: false });
  }
}
