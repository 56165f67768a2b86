import type { AgentLike } from '@switchboard/core';
import type { z } from 'zod';
import { checkGraph, type GraphDraft, graphView } from './graph-compile.js';
import { GraphCompileError } from './graph-errors.js';
import { hostedName } from './graph-node-agents.js';
import { GraphOrchestrator } from './graph-orchestrator.js';
import { StateRules } from './graph-state.js';
import type {
  AgentNodeOptions,
  END,
  FunctionNodeOptions,
  GraphNode,
  GraphRoute,
  GraphState,
  InputNodeOptions,
  NodeFunction,
  OrchestratorNodeOptions,
  ReducerSpec,
} from './graph-types.js';

/** Options of {@link stateGraph}. */
export interface StateGraphOptions<Schema extends z.ZodObject> {
  /** The orchestrator's name; its hosted agents are `<name>__<node>` (letters, digits, _ and -). */
  name: string;
  description?: string;
  /** The state: a zod object schema, checked after every node (a node's bad update fails that node). */
  state: Schema;
  /** A reducer per key: `replace` (default), `append`, `merge`, or a function. */
  reducers?: Partial<Record<keyof z.infer<Schema> & string, ReducerSpec>>;
  /** The state the user's message starts (the carried state, or `{}`, is given): e.g. `(message) => ({ question: message })`. */
  input?: (message: string, state: Readonly<z.infer<Schema>>) => Partial<z.infer<Schema>>;
  /** The answer from the final state. Default: the last step's outputs (its nodes' replies). */
  respond?: (state: Readonly<z.infer<Schema>>) => string;
  /** The most steps of one turn (a loop's bound; default 25). Each step is one decision of the turn: keep the app's `maxHops` above it. */
  maxSteps?: number;
  /** At `maxSteps`: fail with a `GraphStepLimitError` (default) or answer with `respond` over the state so far. */
  onStepLimit?: 'error' | 'respond';
  /** Keep the final state in session memory and start the session's next turn from it (default false). */
  carryState?: boolean;
  /** The largest state, as JSON (default 65 536): a bigger one fails the node that made it. */
  maxStateBytes?: number;
}

/**
 * Collects a graph's nodes and edges; {@link compile} checks it and returns
 * the orchestrator. Every method returns the builder.
 *
 * `Nodes` is the names of the nodes added so far, tracked by the type: each
 * `node`, `agentNode`, `orchestratorNode` and `inputNode` adds its name, and
 * `edge`, `conditionalEdge` and `entry` take only those (and `END` as a
 * target), so a misspelt node name in an edge is a compile error. Add the
 * nodes first, then the edges. A name only known at run time (a `string`)
 * widens `Nodes` to `string`, and `compile()` still checks every name, with
 * a {@link GraphCompileError} naming the unknown node and the nodes there
 * are. A builder held in a variable that is reassigned (nodes added in a
 * loop) is typed `GraphBuilder<State>`: any names.
 *
 * @example
 * ```ts
 * stateGraph({ name: 'pipeline', state: z.object({ text: z.string() }) })
 *   .node('draft', (s) => ({ text: `${s.text}!` }))
 *   .node('review', () => ({}))
 *   .entry('draft')
 *   .edge('draft', 'reveiw'); // compile error: 'reveiw' is not 'draft' | 'review'
 * ```
 */
export class GraphBuilder<State extends GraphState, Nodes extends string = string> {
  readonly #options: StateGraphOptions<z.ZodObject>;
  readonly #draft: GraphDraft;
  #respond?: (state: Readonly<State>) => string;

  constructor(options: StateGraphOptions<z.ZodObject>) {
    this.#options = options;
    this.#draft = { name: options.name, nodes: [], edges: [], routes: [] };
    if (options.respond) this.#respond = options.respond as (state: Readonly<State>) => string;
  }

  #add<Name extends string>(node: GraphNode<State> & { name: Name }): GraphBuilder<State, Nodes | Name> {
    this.#draft.nodes.push(node as unknown as GraphNode<GraphState>);
    return this;
  }

  /** A function node: `(state, context) => update`, sync or async; it runs as an agent the graph hosts. */
  node<Name extends string>(
    name: Name,
    run: NodeFunction<State>,
    options: FunctionNodeOptions<State> = {},
  ): GraphBuilder<State, Nodes | Name> {
    return this.#add({ ...options, kind: 'function', name, run });
  }

  /** A node that calls one of the app's agents with a task built from the state, and maps its reply to an update. */
  agentNode<Name extends string>(
    name: Name,
    options: AgentNodeOptions<State>,
  ): GraphBuilder<State, Nodes | Name> {
    return this.#add({ ...options, kind: 'agent', name });
  }

  /** A node that runs a nested orchestrator with its agents (an orchestrator agent), its answer mapped to an update. */
  orchestratorNode<Name extends string>(
    name: Name,
    options: OrchestratorNodeOptions<State>,
  ): GraphBuilder<State, Nodes | Name> {
    return this.#add({ ...options, kind: 'orchestrator', name });
  }

  /** A node that asks the user, ends the turn with the question, and resumes with the session's next message. */
  inputNode<Name extends string>(
    name: Name,
    options: InputNodeOptions<State>,
  ): GraphBuilder<State, Nodes | Name> {
    return this.#add({ ...options, kind: 'input', name });
  }

  /**
   * An edge between nodes added before it; several targets (or several
   * edges from one node) run as one parallel step. `END` ends the graph.
   */
  edge(from: Nodes, to: Nodes | typeof END | readonly (Nodes | typeof END)[]): this {
    const targets: readonly string[] = typeof to === 'string' ? [to] : to;
    for (const target of targets) this.#draft.edges.push({ from, to: target });
    return this;
  }

  /**
   * A conditional edge: `route(state)` picks the next node, several for a
   * parallel step, or `END`; `targets` lists what it may pick (nodes added
   * before it, or `END`: for the checks and the picture).
   */
  conditionalEdge(from: Nodes, route: GraphRoute<State>, targets: readonly (Nodes | typeof END)[]): this {
    this.#draft.routes.push({ from, route: route as GraphRoute<GraphState>, targets });
    return this;
  }

  /** The node the graph starts at (one added before it). */
  entry(name: Nodes): this {
    this.#draft.entry = name;
    return this;
  }

  /** The answer from the final state (instead of the last step's outputs). */
  respond(respond: (state: Readonly<State>) => string): this {
    this.#respond = respond;
    return this;
  }

  /**
   * Checks the graph (one clear `GraphCompileError` per problem: an unknown
   * node, no entry, an unreachable node, an edge from the end, …) and
   * returns it as an orchestrator. `agents` (the app's agents, or their
   * metadata: `app.agentMetas`) lets it check the agents its agent nodes call.
   */
  compile({ agents }: { agents?: readonly AgentLike[] } = {}): GraphOrchestrator {
    const {
      name,
      description,
      state,
      reducers = {},
      input,
      maxSteps = 25,
      onStepLimit = 'error',
      carryState = false,
      maxStateBytes = 65_536,
    } = this.#options;
    if (typeof name !== 'string' || !/^[A-Za-z0-9_-]{1,48}$/.test(name))
      throw new GraphCompileError({
        graph: String(name),
        problem: 'its name must be 1-48 letters, digits, _ or -',
      });
    if (!(Number.isInteger(maxSteps) && maxSteps >= 1))
      throw new GraphCompileError({ graph: name, problem: 'maxSteps must be an integer ≥ 1' });
    if (!(Number.isInteger(maxStateBytes) && maxStateBytes >= 2))
      throw new GraphCompileError({ graph: name, problem: 'maxStateBytes must be an integer ≥ 2' });
    const rules = new StateRules(
      name,
      state as z.ZodType<GraphState>,
      reducers as Record<string, ReducerSpec>,
      maxStateBytes,
    );
    const checked = checkGraph(this.#draft, agents);
    for (const node of checked.nodes.values()) {
      if (
        (node.kind === 'function' || node.kind === 'orchestrator') &&
        hostedName(name, node.name).length > 64
      )
        throw new GraphCompileError({
          graph: name,
          problem: `the agent of node '${node.name}' ('${hostedName(name, node.name)}') is over 64 characters: shorten the graph's or the node's name`,
        });
    }
    return new GraphOrchestrator({
      name,
      ...(description === undefined ? {} : { description }),
      checked,
      rules,
      agents: agents ?? [],
      ...(input ? { input: input as (message: string, state: GraphState) => unknown } : {}),
      ...(this.#respond ? { respond: this.#respond as (state: GraphState) => string } : {}),
      maxSteps,
      onStepLimit,
      carryState,
      view: graphView(name, checked),
    });
  }
}

/**
 * Starts a graph workflow over a typed state: add nodes (functions of the
 * state, agent calls, nested orchestrators, questions to the user), edges
 * and conditional edges, an entry, then `compile()` it into an
 * orchestrator, usable wherever one is (an app's, a wrapper's inner one, an
 * `orchestratorAgent`'s). See `docs/guides/graphs.md`.
 *
 * @example
 * ```ts
 * const triage = stateGraph({
 *   name: 'triage',
 *   state: z.object({ question: z.string(), kind: z.string().optional(), notes: z.array(z.string()).default([]) }),
 *   reducers: { notes: 'append' },
 *   input: (message) => ({ question: message }),
 * })
 *   .agentNode('classify', { agent: 'classifier', task: (s) => s.question, into: 'kind' })
 *   .node('billing', (s) => ({ notes: [`billing: ${s.question}`] }))
 *   .node('technical', (s) => ({ notes: [`technical: ${s.question}`] }))
 *   .entry('classify')
 *   .conditionalEdge('classify', (s) => (s.kind === 'billing' ? 'billing' : 'technical'), ['billing', 'technical'])
 *   .respond((s) => s.notes.join('\n'))
 *   .compile({ agents: app.agentMetas });
 * ```
 */
export function stateGraph<Schema extends z.ZodObject>(
  options: StateGraphOptions<Schema>,
): GraphBuilder<z.infer<Schema> & GraphState, never> {
  return new GraphBuilder(options as unknown as StateGraphOptions<z.ZodObject>);
}
