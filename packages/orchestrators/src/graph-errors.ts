import { AgentError, SystemError } from '@switchboard/core';

/** A graph that cannot run, found by `compile()`: an unknown node, no entry, an unreachable node, an edge from the end. */
export class GraphCompileError extends SystemError {
  readonly code = 'graph_invalid';
  readonly graph: string;
  constructor({ graph, problem }: { graph: string; problem: string }) {
    super({ message: `Graph '${graph}': ${problem}` });
    this.graph = graph;
  }
}

/** A node's update left the state invalid (its schema's issues), or the node wrote a key the state does not have. */
export class GraphStateError extends SystemError {
  readonly code = 'invalid_graph_state';
  readonly node: string;
  readonly issues: readonly string[];
  constructor({ graph, node, issues }: { graph: string; node: string; issues: readonly string[] }) {
    super({ message: `Graph '${graph}': node '${node}' left an invalid state: ${issues.join('; ')}` });
    this.node = node;
    this.issues = issues;
  }
}

/** The graph ran its `maxSteps` steps and still had nodes to run (a loop that did not end). */
export class GraphStepLimitError extends SystemError {
  readonly code = 'graph_step_limit';
  readonly maxSteps: number;
  constructor({ graph, maxSteps, next }: { graph: string; maxSteps: number; next: readonly string[] }) {
    super({
      message: `Graph '${graph}' reached its limit of ${maxSteps} steps with ${next.join(', ')} still to run (maxSteps)`,
    });
    this.maxSteps = maxSteps;
  }
}

/** A node failed (its agent failed, or a person refused it) and has no `onError`; or a route went wrong. */
export class GraphNodeError extends SystemError {
  readonly code = 'graph_node_failed';
  readonly node: string;
  readonly failure: string;
  constructor({
    graph,
    node,
    failure,
    cause,
  }: { graph: string; node: string; failure: string; cause?: unknown }) {
    super({ message: `Graph '${graph}': node '${node}' failed (${failure})`, cause });
    this.node = node;
    this.failure = failure;
  }
}

/** A function node's update that left the state invalid: the node's call fails with the schema's issues. */
export class GraphOutputError extends AgentError {
  override readonly code = 'invalid_graph_state';
  readonly issues: readonly string[];
  constructor({ agent, node, issues }: { agent: string; node: string; issues: readonly string[] }) {
    super({ agent, message: `node '${node}' left an invalid state: ${issues.join('; ')}` });
    this.issues = issues;
  }
}
