/**
 * Which agents an `App` hosts: their names are unique (checked when the app
 * is made), and the orchestrator it mounts routes to none but those (checked
 * at mount, before any request).
 *
 * @module
 */
import {
  type AgentMeta,
  ConfigurationError,
  type Orchestrator,
  type OrchestratorOptions,
} from '@switchboard/core';
import type { Agent } from './agents/agent.js';
import { withHostedAgents } from './agents/hosted-agents.js';
import type { OrchestratorInput } from './app-options.js';

/** The app's agents by name; two agents of the same name fail at once. */
export function agentsByName(agents: readonly Agent[]): Map<string, Agent> {
  const byName = new Map<string, Agent>();
  for (const agent of agents) {
    if (byName.has(agent.name)) {
      throw new ConfigurationError({
        message: `Two agents are named '${agent.name}'; agent names must be unique`,
      });
    }
    byName.set(agent.name, agent);
  }
  return byName;
}

function isOrchestratorClass(
  input: OrchestratorInput,
): input is new (
  options: OrchestratorOptions,
) => Orchestrator {
  return typeof input === 'function';
}

/** The orchestrator given to `mount()`: a class is made with the app's name and agents. */
export function orchestratorOf(input: OrchestratorInput, appName: string, agents: AgentMeta[]): Orchestrator {
  return isOrchestratorClass(input) ? new input({ name: appName, agents }) : input;
}

/**
 * The agents the app's turns may call: its own, and those the orchestrator
 * brings. Fails when the orchestrator knows an agent that is neither.
 */
export function agentsRoutedBy(
  instance: Orchestrator,
  byName: ReadonlyMap<string, Agent>,
  appName: string,
): ReadonlyMap<string, Agent> {
  // A graph brings its function nodes as agents of its own: hosted beside the app's.
  const agents = withHostedAgents(byName, instance, `App '${appName}'`);
  const unknown = instance.agents.filter((agent) => !agents.has(agent.name)).map((agent) => agent.name);
  if (unknown.length > 0) {
    throw new ConfigurationError({
      message: `Orchestrator '${instance.name}' routes to agents the app does not host: ${unknown.join(', ')}; hosted agents: ${[...agents.keys()].join(', ')}`,
    });
  }
  return agents;
}
