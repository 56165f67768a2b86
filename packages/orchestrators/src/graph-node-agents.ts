import type { AgentMeta, Conversation } from '@switchboard/core';
import { type Agent, defineAgent, observe, orchestratorAgent } from '@switchboard/runtime';
import type { CheckedGraph } from './graph-compile.js';
import { GraphOutputError } from './graph-errors.js';
import { type GraphStart, parseNodeCallId, recordedStart, replay } from './graph-replay.js';
import type { StateRules } from './graph-state.js';
import type { GraphNode, GraphState } from './graph-types.js';

/** The name of the agent that runs a graph's function or orchestrator node. */
export function hostedName(graph: string, node: string): string {
  return `${graph}__${node}`;
}

function describeNode(graph: string, node: GraphNode<GraphState>): string {
  return node.description ?? `Graph '${graph}', node '${node.name}'`;
}

/** The metadata of the agents {@link nodeAgents} makes, without making them. */
export function hostedMetas(graph: string, checked: CheckedGraph): AgentMeta[] {
  return [...checked.nodes.values()]
    .filter((node) => node.kind === 'function' || node.kind === 'orchestrator')
    .map((node) => ({ name: hostedName(graph, node.name), description: describeNode(graph, node) }));
}

/** What the hosted agents need of their graph. */
export interface NodeAgentsSettings {
  graph: string;
  checked: CheckedGraph;
  rules: StateRules;
  /** The turn's start when its steps did not record one (a hand-built conversation). */
  freshStart(conversation: Conversation): GraphStart;
}

/**
 * The agents a graph hosts: one per function node (it replays the turn to
 * the state before its step, runs the function in a `graph node <name>`
 * span whose input is that state and whose output is the update, checks
 * the update, and answers with it as JSON) and one per nested orchestrator
 * (an orchestrator agent).
 */
export function nodeAgents(settings: NodeAgentsSettings): Agent[] {
  const agents: Agent[] = [];
  for (const node of settings.checked.nodes.values()) {
    if (node.kind === 'function') agents.push(functionAgent(settings, node));
    else if (node.kind === 'orchestrator') {
      agents.push(
        orchestratorAgent({
          name: hostedName(settings.graph, node.name),
          description: describeNode(settings.graph, node),
          orchestrator: node.orchestrator,
          agents: node.agents,
          ...(node.maxHops === undefined ? {} : { maxHops: node.maxHops }),
        }),
      );
    }
  }
  return agents;
}

function functionAgent(
  settings: NodeAgentsSettings,
  node: Extract<GraphNode<GraphState>, { kind: 'function' }>,
): Agent {
  const { graph, checked, rules } = settings;
  const name = hostedName(graph, node.name);
  const spanName = `graph node ${node.name}`;
  return defineAgent({
    name,
    description: describeNode(graph, node),
    ...(node.timeoutMs === undefined ? {} : { timeoutMs: node.timeoutMs }),
    async run(_message, context) {
      const call = parseNodeCallId(context.toolCall.id);
      if (!call || call.node !== node.name)
        throw new Error(`call '${context.toolCall.id}' is not a call of this node`);
      const { conversation } = context;
      const start = recordedStart(graph, conversation.steps) ?? settings.freshStart(conversation);
      const position = replay({ graph, nodes: checked.nodes, rules }, conversation, start, {
        before: call.step,
      });
      if (position.failure) throw position.failure;
      const nodeContext = {
        node: node.name,
        step: call.step,
        signal: context.signal,
        idempotencyKey: context.idempotencyKey,
        request: context.request,
      };
      const run = observe((state: GraphState) => node.run(state, nodeContext), { name: spanName });
      const update = await run(position.state);
      const checkedState = rules.apply(position.state, update);
      if (!checkedState.ok)
        throw new GraphOutputError({ agent: name, node: node.name, issues: checkedState.issues });
      return JSON.stringify(update ?? {});
    },
  });
}
