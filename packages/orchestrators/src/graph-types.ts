import type { Orchestrator, RequestContext } from '@switchboard/core';
import type { Agent, PublishedGraph } from '@switchboard/runtime';

/** What a route returns to end the graph (see {@link GraphBuilder.conditionalEdge}). */
export const END = '__end__';

/** A graph's state: a plain JSON object, as its zod schema describes it. */
export type GraphState = Record<string, unknown>;

/** Combines a key's current value with a node's update of it. Must be pure: a turn replays it. */
export type Reducer<Value = unknown> = (current: Value, update: Value) => Value;

/**
 * How a node's update of a key combines with the key's value: `replace`
 * (the default), `append` (arrays: the update's items, or the update
 * itself, go at the end), `merge` (objects: a shallow merge), or a function.
 */
export type ReducerSpec = 'replace' | 'append' | 'merge' | Reducer;

/** What a function node gets besides the state. */
export interface GraphNodeContext {
  /** The node's name. */
  readonly node: string;
  /** The graph's step this node runs in (1 for the first of the turn). */
  readonly step: number;
  /** Aborted when the node times out, the turn is cancelled or the server shuts down. */
  readonly signal: AbortSignal;
  /** The same for every run of this node in this step (retries, a run again after a crash): pass it to side effects. */
  readonly idempotencyKey: string;
  /** The request's context: session, user, tenant, memory. */
  readonly request: RequestContext;
}

/** A function node: the state (read-only) in, the keys it changes out (sync or async). */
export type NodeFunction<State> = (
  state: Readonly<State>,
  context: GraphNodeContext,
) => Partial<State> | undefined | Promise<Partial<State> | undefined>;

/** How a node failed (its reply was an error, or a person refused it). */
export interface GraphNodeFailure {
  readonly node: string;
  /** The error code: `approval_rejected`, `agent_timeout`, `invalid_graph_state`, … */
  readonly code: string;
  /** A safe description (never an agent's internal error text). */
  readonly message: string;
  /** True when a person refused the node's approval (or it expired). */
  readonly rejected: boolean;
}

/** Options every kind of node takes. */
export interface NodeOptions<State> {
  /** Shown in the graph's picture and traces. */
  description?: string;
  /**
   * The node waits for a person's approval before it runs (the app's
   * approvals: the turn pauses, any replica resumes it): always (`true`), or
   * when the function says so; a string is the reason shown to the approver.
   */
  approval?: boolean | ((state: Readonly<State>) => boolean | string);
  /**
   * Turns a failure of the node (an error, a refused approval) into an
   * update, and the graph goes on; without it a failed node fails the turn.
   */
  onError?: (state: Readonly<State>, failure: GraphNodeFailure) => Partial<State>;
}

/** Options of a function node. */
export interface FunctionNodeOptions<State> extends NodeOptions<State> {
  /** The node's task text, for traces and approvers (default: `graph node <name>`). */
  task?: (state: Readonly<State>) => string;
  /** The node's deadline (default: the app's agent timeout). */
  timeoutMs?: number;
}

/** How a node that answers with text changes the state. */
export interface ReplyMapping<State> {
  /** The task text the node's agent gets, built from the state. */
  task: (state: Readonly<State>) => string;
  /** The update made from the reply. Must be pure: a turn replays it. */
  update?: (reply: string, state: Readonly<State>) => Partial<State>;
  /** Shorthand for `update`: the reply text goes to this key (through its reducer). */
  into?: keyof State & string;
}

/** Options of a node that calls one of the app's agents. */
export interface AgentNodeOptions<State> extends NodeOptions<State>, ReplyMapping<State> {
  /** The agent's name. */
  agent: string;
}

/** Options of a node that runs a nested orchestrator (as an orchestrator agent, with its own loop). */
export interface OrchestratorNodeOptions<State> extends NodeOptions<State>, ReplyMapping<State> {
  orchestrator: Orchestrator;
  /** The agents the nested orchestrator routes to. */
  agents: readonly Agent[];
  /** The most decisions of the nested loop (default 10). */
  maxHops?: number;
}

/**
 * Options of a node that asks the user and waits for the next message: the
 * turn answers with the question, and the session's next message resumes
 * the graph at this node with the answer.
 */
export interface InputNodeOptions<State> {
  description?: string;
  /** The question the user sees. */
  ask: (state: Readonly<State>) => string;
  /** The update made from the user's answer. */
  update: (answer: string, state: Readonly<State>) => Partial<State>;
}

/** A conditional edge's route: the next node, several for a parallel step, or {@link END}. */
export type GraphRoute<State> = (state: Readonly<State>) => string | readonly string[];

/** A node as the graph runs it. */
export type GraphNode<State> =
  | ({ kind: 'function'; name: string; run: NodeFunction<State> } & FunctionNodeOptions<State>)
  | ({ kind: 'agent'; name: string } & AgentNodeOptions<State>)
  | ({ kind: 'orchestrator'; name: string } & OrchestratorNodeOptions<State>)
  | ({ kind: 'input'; name: string } & InputNodeOptions<State>);

/** The node kinds. */
export type GraphNodeKind = GraphNode<GraphState>['kind'];

/** A compiled graph's shape, as published to clients (`GET /v1/agents`) and drawn by the console. */
export type GraphView = PublishedGraph;
