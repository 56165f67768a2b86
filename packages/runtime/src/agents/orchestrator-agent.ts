import { ConfigurationError, type Orchestrator } from '@switchboard/core';
import { type Agent, defineAgent } from './agent.js';
import { withHostedAgents } from './hosted-agents.js';
import { runNested } from './nested-turn.js';

/** Options of {@link orchestratorAgent}. */
export interface OrchestratorAgentOptions {
  name: string;
  description: string;
  /** Decides the nested turn; every agent it names must be in {@link agents}. */
  orchestrator: Orchestrator;
  /** The agents the inner orchestrator routes to. */
  agents: readonly Agent[];
  /** The most decisions of the nested turn (default 10); past it the call fails. */
  maxHops?: number;
  /**
   * The deepest nesting allowed (default 3): a turn of the app is depth 0, the
   * loop of an orchestrator agent it calls depth 1, and so on. A call that
   * would go deeper fails with a {@link NestingDepthError}.
   */
  maxDepth?: number;
  /** The timeout of an inner agent without its own `timeoutMs` (default 60 000 ms, the app's default). */
  agentTimeoutMs?: number;
  /** Overrides the app's per-agent timeout for the whole nested turn. */
  timeoutMs?: number;
  keywords?: string[];
  capabilities?: string[];
  /** Keep inner failures' own text in the inner replies and steps (as the app's `exposeErrorDetails`). */
  exposeErrorDetails?: boolean;
}

export type { InnerStep, InnerStepCall } from '../turns/turn-record.js';
export { NestingDepthError, nestingDepth } from './nested-turn.js';

/** Fails fast on an inner orchestrator that names agents the orchestrator agent does not have. */
function agentsByName(
  name: string,
  orchestrator: Orchestrator,
  agents: readonly Agent[],
): ReadonlyMap<string, Agent> {
  const byName = new Map<string, Agent>();
  for (const agent of agents) {
    if (byName.has(agent.name)) {
      throw new ConfigurationError({
        message: `Orchestrator agent '${name}' has two agents named '${agent.name}'; agent names must be unique`,
      });
    }
    byName.set(agent.name, agent);
  }
  const hosted = withHostedAgents(byName, orchestrator, `Orchestrator agent '${name}'`);
  const missing = orchestrator.agents.filter((meta) => !hosted.has(meta.name)).map((meta) => meta.name);
  if (missing.length > 0) {
    throw new ConfigurationError({
      message: `Orchestrator agent '${name}': its orchestrator '${orchestrator.name}' routes to ${missing.map((m) => `'${m}'`).join(', ')}, missing from its agents`,
    });
  }
  return hosted;
}

/**
 * Makes an orchestrator and its agents one agent of another orchestrator:
 * a call runs a nested turn (the task as its user message, then the inner
 * agents' replies) and answers with the inner `route_to_user` message.
 * Nothing of the nested turn is stored in the session's messages: its steps
 * (each inner call with its status, and a failed one's error code) are kept
 * under the outer call in the turn's steps (`StepCall.innerSteps`) and in the
 * reply's `metadata.innerSteps`, also when the nested turn fails; its
 * decisions and agent calls are traced under this agent's span; when the
 * turn is streamed, the inner agents' events are streamed too, marked with
 * the outer call's id (`parentToolCallId`). Inner fan-outs run concurrently;
 * inner agents are aborted with this call (its timeout, a cancel,
 * shutdown). An inner error decision or running out of hops fails the call;
 * going deeper than `maxDepth` fails it with a {@link NestingDepthError}.
 *
 * @example
 * ```ts
 * const research = orchestratorAgent({
 *   name: 'research',
 *   description: 'Finds and summarises sources',
 *   orchestrator: new LlmOrchestrator({ name: 'research-team', agents: [search, summarise], model, client }),
 *   agents: [search, summarise],
 * });
 * app.mount(new KeywordOrchestrator({ name: 'front', agents: [research, billing] }));
 * ```
 */
export function orchestratorAgent({
  name,
  description,
  orchestrator,
  agents,
  maxHops = 10,
  maxDepth = 3,
  agentTimeoutMs = 60_000,
  exposeErrorDetails = false,
  ...meta
}: OrchestratorAgentOptions): Agent {
  if (!(Number.isInteger(maxDepth) && maxDepth >= 1)) {
    throw new ConfigurationError({
      message: `Orchestrator agent '${name}': maxDepth must be an integer ≥ 1`,
    });
  }
  if (!(Number.isInteger(maxHops) && maxHops >= 1)) {
    throw new ConfigurationError({ message: `Orchestrator agent '${name}': maxHops must be an integer ≥ 1` });
  }
  const byName = agentsByName(name, orchestrator, agents);
  const settings = { name, orchestrator, byName, maxHops, maxDepth, agentTimeoutMs, exposeErrorDetails };
  return defineAgent({
    name,
    description,
    ...meta,
    run: (message, context) => runNested(settings, message, context),
  });
}
