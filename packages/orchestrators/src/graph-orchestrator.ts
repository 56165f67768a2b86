import {
  AbstractOrchestrator,
  type AgentLike,
  annotateStep,
  type Conversation,
  createId,
  currentUserMessage,
  type Decision,
  type ErrorMessage,
  type JsonValue,
  routeToUser,
  type StepAnnotations,
  type ToolCall,
  toolCall,
} from '@switchboard/core';
import type { Agent, HostsAgents, PublishesGraph } from '@switchboard/runtime';
import { type CheckedGraph, toMermaid } from './graph-compile.js';
import { GraphNodeError, GraphStateError, GraphStepLimitError } from './graph-errors.js';
import { answersQuestion, type Carried, carriedState, readCarried, writeCarried } from './graph-memory.js';
import { hostedMetas, hostedName, nodeAgents } from './graph-node-agents.js';
import { type GraphPosition, type GraphStart, nodeCallId, recordedStart, replay } from './graph-replay.js';
import type { StateRules } from './graph-state.js';
import { END, type GraphNode, type GraphState, type GraphView } from './graph-types.js';

/** What {@link GraphOrchestrator} is built from (by `stateGraph(…).compile()`). */
export interface GraphSettings {
  name: string;
  description?: string;
  checked: CheckedGraph;
  rules: StateRules;
  /** The app's agents the agent nodes call (the agents, or their metadata). */
  agents: readonly AgentLike[];
  input?: (message: string, state: GraphState) => unknown;
  respond?: (state: GraphState) => string;
  maxSteps: number;
  onStepLimit: 'error' | 'respond';
  carryState: boolean;
  view: GraphView;
}

/**
 * A compiled graph (see `stateGraph`): an orchestrator whose every decision
 * is one step of the graph, the nodes the previous step's edges lead to,
 * called at once (one fan-out when there are several). Its position and
 * state live in the turn: each node's update is its stored reply and each
 * step's nodes are its calls' ids, so whoever continues the turn (another
 * replica, after a crash or an approval) replays them and goes on after
 * the last finished node; the turn's start state is annotated on its first
 * step (`graphStart`). Function and orchestrator nodes run as agents the
 * graph hosts (`hostedAgents`, named `<graph>__<node>`).
 */
export class GraphOrchestrator extends AbstractOrchestrator implements HostsAgents, PublishesGraph {
  readonly hostedAgents: readonly Agent[];
  /** The most steps of one turn. */
  readonly maxSteps: number;
  /** The graph's nodes, edges and picture, as published to clients. */
  readonly view: GraphView;
  readonly #settings: GraphSettings;
  readonly #usesMemory: boolean;

  constructor(settings: GraphSettings) {
    const { name, description, checked } = settings;
    const called = new Set<string>();
    for (const node of checked.nodes.values()) if (node.kind === 'agent') called.add(node.agent);
    const appAgents = settings.agents.filter((agent) => called.has(agent.name));
    for (const agent of called)
      if (!appAgents.some((meta) => meta.name === agent)) appAgents.push({ name: agent, description: '' });
    super({
      name,
      ...(description === undefined ? {} : { description }),
      agents: [...appAgents, ...hostedMetas(name, checked)],
    });
    this.hostedAgents = Object.freeze(
      nodeAgents({
        graph: name,
        checked,
        rules: settings.rules,
        freshStart: (conversation) => this.#freshStart(conversation, undefined),
      }),
    );
    this.maxSteps = settings.maxSteps;
    this.view = settings.view;
    this.#settings = settings;
    this.#usesMemory =
      settings.carryState || [...checked.nodes.values()].some((node) => node.kind === 'input');
  }

  /**
   * The graph as a Mermaid flowchart; `highlight` names nodes to mark (a
   * turn's path, from its steps' `graphNodes` annotations).
   */
  toMermaid({ highlight = [] }: { highlight?: readonly string[] } = {}): string {
    return toMermaid(this.#settings.checked, highlight);
  }

  protected handleMessage(conversation: Conversation): Decision | Promise<Decision> {
    const recorded = recordedStart(this.name, conversation.steps);
    if (recorded) return this.#step(conversation, recorded, undefined);
    if (!this.#usesMemory) return this.#begin(conversation, undefined);
    return readCarried(this.name).then((carried) => this.#begin(conversation, carried));
  }

  #begin(conversation: Conversation, carried: Carried | undefined): Decision | Promise<Decision> {
    let start: GraphStart;
    try {
      start = this.#freshStart(conversation, carried);
    } catch (error) {
      return this.#failed(conversation, error);
    }
    const annotations: StepAnnotations = { graphStart: start.state as JsonValue };
    if (start.resumedFrom !== undefined) annotations.graphResumedFrom = start.resumedFrom;
    return this.#step(conversation, start, annotations);
  }

  /** The turn's start: resumed at the input node the last answer asked from, else the input over the carried (or empty) state. */
  #freshStart(conversation: Conversation, carried: Carried | undefined): GraphStart {
    const { rules, checked, input, carryState } = this.#settings;
    const text = currentUserMessage(conversation).content;
    const waiting = carried?.waiting === undefined ? undefined : checked.nodes.get(carried.waiting);
    if (waiting?.kind === 'input' && answersQuestion(conversation, carried?.askId)) {
      const state = carriedState(carried) ?? {};
      const resumed = rules.apply(state, waiting.update(text, state));
      if (!resumed.ok)
        throw new GraphStateError({ graph: this.name, node: waiting.name, issues: resumed.issues });
      return { state: resumed.state, resumedFrom: waiting.name };
    }
    const base = (carryState ? carriedState(carried) : undefined) ?? {};
    const started = rules.apply(base, input?.(text, base));
    if (!started.ok) throw new GraphStateError({ graph: this.name, node: 'input', issues: started.issues });
    return { state: started.state };
  }

  #step(
    conversation: Conversation,
    start: GraphStart,
    annotations: StepAnnotations | undefined,
  ): Decision | Promise<Decision> {
    const { checked, maxSteps, onStepLimit } = this.#settings;
    const position = replay(
      { graph: this.name, nodes: checked.nodes, rules: this.#settings.rules },
      conversation,
      start,
      { traceLast: true },
    );
    if (annotations) annotateStep(conversation, annotations);
    if (position.failure) return this.#failed(conversation, position.failure);
    let next: string[];
    try {
      next = this.#next(position);
    } catch (error) {
      return this.#failed(conversation, error);
    }
    if (next.length === 0) return this.#answer(conversation, position);
    if (position.path.length >= maxSteps) {
      if (onStepLimit === 'respond') return this.#answer(conversation, position, { graphLimit: true });
      return this.#failed(conversation, new GraphStepLimitError({ graph: this.name, maxSteps, next }));
    }
    const nodes = next.map((name) => checked.nodes.get(name) as GraphNode<GraphState>);
    const input = nodes.find((node) => node.kind === 'input');
    if (input) {
      if (nodes.length > 1) {
        const failure = `it would run beside ${next.filter((name) => name !== input.name).join(', ')}; an input node runs alone`;
        return this.#failed(
          conversation,
          new GraphNodeError({ graph: this.name, node: input.name, failure }),
        );
      }
      return this.#ask(conversation, position, input as Extract<GraphNode<GraphState>, { kind: 'input' }>);
    }
    const step = position.path.length + 1;
    let calls: ToolCall[];
    try {
      calls = nodes.map((node, index) => this.#call(node, step, index, position.state));
    } catch (error) {
      return this.#failed(conversation, error);
    }
    annotateStep(conversation, { graph: this.name, graphStep: step, graphNodes: next });
    return calls.length === 1 ? (calls[0] as ToolCall) : calls;
  }

  /** The nodes after the last step: the entry (or what follows the input node resumed), else every edge's targets, once. */
  #next(position: GraphPosition): string[] {
    const { checked } = this.#settings;
    const from =
      position.path.at(-1) ?? (position.resumedFrom === undefined ? undefined : [position.resumedFrom]);
    if (!from) return [checked.entry];
    const next = new Set<string>();
    for (const node of from) {
      for (const target of checked.edges.get(node) ?? []) next.add(target);
      for (const { route, targets } of checked.routes.get(node) ?? []) {
        const chosen = route(position.state);
        for (const target of typeof chosen === 'string' ? [chosen] : [...chosen]) {
          if (target !== END && !targets.includes(target)) {
            throw new GraphNodeError({
              graph: this.name,
              node,
              failure: `its route chose '${String(target)}', not one of ${[...new Set([...targets, END])].join(', ')}`,
            });
          }
          next.add(target);
        }
      }
    }
    next.delete(END);
    return [...next];
  }

  #call(node: GraphNode<GraphState>, step: number, index: number, state: GraphState): ToolCall {
    const id = nodeCallId(step, index, node.name, createId('n'));
    const options: Parameters<typeof toolCall>[2] = {
      id,
      reason: `graph ${this.name}, step ${step}: ${node.name}`,
    };
    const approval = node.kind === 'input' ? undefined : node.approval;
    const verdict = typeof approval === 'function' ? approval(state) : approval;
    if (verdict === true || (typeof verdict === 'string' && verdict !== '')) {
      options.requiresApproval = true;
      if (typeof verdict === 'string') options.reason = verdict;
    }
    switch (node.kind) {
      case 'function':
        if (node.timeoutMs !== undefined) options.timeoutMs = node.timeoutMs;
        return toolCall(
          hostedName(this.name, node.name),
          node.task?.(state) ?? `graph node ${node.name}`,
          options,
        );
      case 'agent':
        return toolCall(node.agent, node.task(state), options);
      case 'orchestrator':
        return toolCall(hostedName(this.name, node.name), node.task(state), options);
      default:
        throw new GraphNodeError({
          graph: this.name,
          node: node.name,
          failure: 'an input node is not called',
        });
    }
  }

  #answer(
    conversation: Conversation,
    position: GraphPosition,
    extra: StepAnnotations = {},
  ): Decision | Promise<Decision> {
    const { respond, carryState } = this.#settings;
    let text: string;
    try {
      text = respond ? respond(position.state) : this.#lastOutput(position);
    } catch (error) {
      return this.#failed(conversation, error);
    }
    annotateStep(conversation, { graph: this.name, graphPath: position.path.flat(), ...extra });
    const answer = routeToUser(text, { reason: `graph ${this.name} reached its end` });
    if (!carryState) return answer;
    const carried: Carried = { v: 1, turnId: conversation.turnId, state: position.state };
    return writeCarried(this.name, carried).then(() => answer);
  }

  /** The answer without `respond`: the last step's replies (its nodes' outputs). */
  #lastOutput(position: GraphPosition): string {
    const texts = position.lastReplies
      .filter((reply) => reply.status === 'ok')
      .map((reply) => reply.content.trim());
    return texts.filter((text) => text !== '').join('\n\n') || 'Done.';
  }

  async #ask(
    conversation: Conversation,
    position: GraphPosition,
    node: Extract<GraphNode<GraphState>, { kind: 'input' }>,
  ): Promise<Decision> {
    let question: string;
    try {
      question = node.ask(position.state);
    } catch (error) {
      return this.#failed(conversation, error);
    }
    const askId = createId('ask');
    const carried: Carried = {
      v: 1,
      turnId: conversation.turnId,
      state: position.state,
      waiting: node.name,
      askId,
    };
    if (!(await writeCarried(this.name, carried))) {
      const failure = 'its question could not be kept in session memory';
      return this.#failed(conversation, new GraphNodeError({ graph: this.name, node: node.name, failure }));
    }
    annotateStep(conversation, {
      graph: this.name,
      graphWaiting: node.name,
      graphPath: position.path.flat(),
    });
    return routeToUser(question, {
      id: askId,
      reason: `graph ${this.name} waits at '${node.name}' for the user`,
    });
  }

  #failed(conversation: Conversation, error: unknown): ErrorMessage {
    const failure =
      error instanceof Error
        ? error
        : new GraphNodeError({ graph: this.name, node: '?', failure: String(error) });
    const node = (failure as { node?: unknown }).node;
    annotateStep(
      conversation,
      typeof node === 'string' ? { graph: this.name, graphFailed: node } : { graph: this.name },
    );
    return { error: failure };
  }
}
