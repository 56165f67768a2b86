import { SystemError } from '@switchboard/core';

/**
 * An orchestrator wrapped by {@link withSteps} insisted on calling an agent
 * its active step does not allow: the turn fails with this error rather
 * than run the call. `allowedAgents` is what the step allowed at that point.
 */
export class StepRefusedError extends SystemError {
  readonly code = 'step_refused';
  /** The active step. */
  readonly step: string;
  /** The agents the orchestrator tried to call. */
  readonly agents: readonly string[];
  /** The agents the step allowed (`route_to_user` is always allowed besides). */
  readonly allowedAgents: readonly string[];

  constructor({
    orchestrator,
    step,
    agents,
    allowedAgents,
    sequence,
  }: {
    orchestrator: string;
    step: string;
    agents: readonly string[];
    allowedAgents: readonly string[];
    /** The step's sequence, when the refusal is because it is running. */
    sequence?: readonly string[];
  }) {
    super({ message: refusalText({ orchestrator, step, agents, allowedAgents, sequence }) });
    this.step = step;
    this.agents = agents;
    this.allowedAgents = allowedAgents;
  }
}

/** The explanation of a refusal, shared by the error and the refusal the orchestrator is shown. */
export function refusalText({
  orchestrator,
  step,
  agents,
  allowedAgents,
  sequence,
}: {
  orchestrator: string;
  step: string;
  agents: readonly string[];
  allowedAgents: readonly string[];
  sequence?: readonly string[];
}): string {
  const called = agents.map((agent) => `'${agent}'`).join(', ');
  const allowed = allowedAgents.length
    ? `only ${allowedAgents.join(', ')} may be called now`
    : 'no agent may be called now, only the user answered';
  const why = sequence?.length ? ` (the next agent of its sequence ${sequence.join(' → ')})` : '';
  return `Step '${step}' of '${orchestrator}' refused the call to ${called}: ${allowed}${why}`;
}
