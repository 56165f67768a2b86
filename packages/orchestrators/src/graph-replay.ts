import {
  type Conversation,
  type ConversationStep,
  latestToolResults,
  type ToolMessage,
  turnMessages,
} from '@switchboard/core';
import { observe } from '@switchboard/runtime';
import { GraphNodeError, GraphStateError } from './graph-errors.js';
import type { StateRules } from './graph-state.js';
import type { GraphNode, GraphNodeFailure, GraphState } from './graph-types.js';

/** The prefix of a graph node's call id: `g:<step>:<branch>:<node>:<unique>`. */
const CALL_PREFIX = 'g:';

/** The call id of `node`, branch `index` of step `step`. */
export function nodeCallId(step: number, index: number, node: string, unique: string): string {
  return `${CALL_PREFIX}${step}:${index}:${node}:${unique}`;
}

/** The step, branch and node a graph call id names, or undefined for another call. */
export function parseNodeCallId(id: string): { step: number; index: number; node: string } | undefined {
  if (!id.startsWith(CALL_PREFIX)) return undefined;
  const [step, index, node] = id.slice(CALL_PREFIX.length).split(':');
  const stepNumber = Number(step);
  const indexNumber = Number(index);
  if (!node || !Number.isInteger(stepNumber) || !Number.isInteger(indexNumber)) return undefined;
  return { step: stepNumber, index: indexNumber, node };
}

/** Where a turn's graph stands: the state after its last finished step, and the steps it ran. */
export interface GraphPosition {
  state: GraphState;
  /** The nodes of each finished step of this turn, in order. */
  path: string[][];
  /** The replies of the last finished step, in branch order. */
  lastReplies: ToolMessage[];
  /** The node the turn resumed from (an input node answered by this turn's message), if any. */
  resumedFrom?: string;
  /** Set when a node failed without `onError`, or left the state invalid. */
  failure?: Error;
}

/** The turn's start as recorded on its first graph step (see `annotateStep`). */
export interface GraphStart {
  state: GraphState;
  resumedFrom?: string;
}

/** The start this turn's first graph decision recorded, if it recorded one. */
export function recordedStart(
  graph: string,
  steps: readonly ConversationStep[] | undefined,
): GraphStart | undefined {
  for (const step of steps ?? []) {
    const annotations = step.annotations;
    if (annotations?.graph !== graph || annotations.graphStart === undefined) continue;
    const state = annotations.graphStart as GraphState;
    const resumedFrom = annotations.graphResumedFrom;
    return typeof resumedFrom === 'string' ? { state, resumedFrom } : { state };
  }
  return undefined;
}

const REFUSALS = new Set(['approval_rejected', 'approval_expired', 'approval_withdrawn']);

/** How a failed reply is shown to `onError`. */
function failureOf(node: string, reply: ToolMessage): GraphNodeFailure {
  const code = typeof reply.metadata?.errorCode === 'string' ? reply.metadata.errorCode : 'agent_error';
  return { node, code, message: reply.content, rejected: REFUSALS.has(code) };
}

/** The update a node's reply makes; throws what the node's own mapping throws. */
function updateOf(node: GraphNode<GraphState>, reply: ToolMessage, state: GraphState): unknown {
  if (node.kind === 'function') return reply.content === '' ? undefined : JSON.parse(reply.content);
  if (node.kind === 'input') return undefined;
  if (node.update) return node.update(reply.content, state);
  if (node.into) return { [node.into]: reply.content };
  return undefined;
}

/** Everything the replay needs of its graph. */
export interface ReplayRules {
  graph: string;
  nodes: ReadonlyMap<string, GraphNode<GraphState>>;
  rules: StateRules;
}

/** Options of {@link replay}. */
export interface ReplayOptions {
  /** Only steps before this one count (a node replays the steps before its own). */
  before?: number;
  /**
   * Trace how the last step's agent and orchestrator nodes changed the
   * state: a `graph node <name>` span each, the reply as input and the
   * update as output (a function node traces its own, where it runs).
   */
  traceLast?: boolean;
}

/**
 * Replays the current turn's graph replies over its start state: each
 * finished step's updates, in branch order, through the reducers, the
 * state checked after every node. Stops at the first failure.
 */
export function replay(
  { graph, nodes, rules }: ReplayRules,
  conversation: Conversation,
  start: GraphStart,
  { before = Number.POSITIVE_INFINITY, traceLast = false }: ReplayOptions = {},
): GraphPosition {
  const detailed = new Map(latestToolResults(conversation).map((reply) => [reply.toolCallId, reply]));
  const bySteps = new Map<number, Array<{ index: number; node: string; reply: ToolMessage }>>();
  for (const message of turnMessages(conversation)) {
    if (message.role !== 'tool') continue;
    const call = parseNodeCallId(message.toolCallId);
    if (!call || call.step >= before) continue;
    const reply = detailed.get(message.toolCallId) ?? message;
    const replies = bySteps.get(call.step);
    if (replies) replies.push({ index: call.index, node: call.node, reply });
    else bySteps.set(call.step, [{ index: call.index, node: call.node, reply }]);
  }
  const position: GraphPosition = { state: start.state, path: [], lastReplies: [] };
  if (start.resumedFrom !== undefined) position.resumedFrom = start.resumedFrom;
  let lastStep = 0;
  while (bySteps.has(lastStep + 1)) lastStep += 1;
  for (let step = 1; step <= lastStep; step += 1) {
    const traced = traceLast && step === lastStep;
    const replies = (bySteps.get(step) ?? []).sort((left, right) => left.index - right.index);
    const stepStart = position.state;
    let state = stepStart;
    for (const { node: name, reply } of replies) {
      const node = nodes.get(name);
      if (!node) {
        position.failure = new GraphNodeError({ graph, node: name, failure: 'the graph has no such node' });
        return position;
      }
      let update: unknown;
      try {
        if (reply.status === 'error') {
          if (node.kind === 'input' || !node.onError) {
            // The error's own text (the schema's issues, say) reaches logs and traces, never the client.
            const detail = reply.metadata?.errorDetail;
            const { code } = failureOf(name, reply);
            position.failure = new GraphNodeError({
              graph,
              node: name,
              failure: `${code}: ${typeof detail === 'string' ? detail : reply.content}`,
            });
            return position;
          }
          update = node.onError(stepStart, failureOf(name, reply));
        } else if (traced && (node.kind === 'agent' || node.kind === 'orchestrator')) {
          const apply = (content: string) => updateOf(node, { ...reply, content }, stepStart);
          update = observe(apply, { name: `graph node ${name}` })(reply.content);
        } else update = updateOf(node, reply, stepStart);
      } catch (error) {
        position.failure = new GraphNodeError({
          graph,
          node: name,
          failure: 'its update threw',
          cause: error,
        });
        return position;
      }
      const checked = rules.apply(state, update);
      if (!checked.ok) {
        position.failure = new GraphStateError({ graph, node: name, issues: checked.issues });
        return position;
      }
      state = checked.state;
    }
    position.state = state;
    position.path.push(replies.map((entry) => entry.node));
    position.lastReplies = replies.map((entry) => entry.reply);
  }
  return position;
}
