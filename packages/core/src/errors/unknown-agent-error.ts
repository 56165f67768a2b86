import { SystemError } from './system-error.js';

/** An orchestrator chose an agent that is not among the candidates it was given. */
export class UnknownAgentError extends SystemError {
  readonly code = 'unknown_agent';
  readonly agent: string;
  readonly knownAgents: readonly string[];
  constructor({ agent, knownAgents }: { agent: string; knownAgents: readonly string[] }) {
    super({ message: `Unknown agent '${agent}'; known agents: ${knownAgents.join(', ') || '(none)'}` });
    this.agent = agent;
    this.knownAgents = knownAgents;
  }
}
