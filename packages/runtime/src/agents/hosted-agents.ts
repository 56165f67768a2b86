import { ConfigurationError, type Orchestrator } from '@switchboard/core';
import type { Agent } from './agent-contract.js';

/**
 * An optional capability of an orchestrator: agents of its own that it
 * routes to beside the app's (a graph's function nodes, its nested
 * orchestrators), which whoever hosts the orchestrator (an `App`, an
 * `orchestratorAgent`) hosts with it. Its `agents` list their metadata too.
 */
export interface HostsAgents {
  /** The agents the orchestrator brings; their names must not clash with the host's. */
  readonly hostedAgents: readonly Agent[];
}

/** True when the orchestrator brings agents of its own (see {@link HostsAgents}). */
export function hostsAgents(orchestrator: Orchestrator): orchestrator is Orchestrator & HostsAgents {
  return Array.isArray((orchestrator as Partial<HostsAgents>).hostedAgents);
}

/**
 * The host's agents by name, with the orchestrator's own added: `byName`
 * itself when it brings none. A name that clashes with another agent fails
 * at once; the same agent hosted already is fine.
 */
export function withHostedAgents(
  byName: ReadonlyMap<string, Agent>,
  orchestrator: Orchestrator,
  host: string,
): ReadonlyMap<string, Agent> {
  if (!hostsAgents(orchestrator) || orchestrator.hostedAgents.length === 0) return byName;
  const merged = new Map(byName);
  for (const agent of orchestrator.hostedAgents) {
    // Already hosted as it is (an app that hosts them itself, for a wrapper around the orchestrator).
    if (merged.get(agent.name) === agent) continue;
    if (merged.has(agent.name)) {
      throw new ConfigurationError({
        message: `${host}: orchestrator '${orchestrator.name}' brings an agent named '${agent.name}', which is already hosted; agent names must be unique`,
      });
    }
    merged.set(agent.name, agent);
  }
  return merged;
}
