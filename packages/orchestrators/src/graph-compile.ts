import type { AgentLike } from '@switchboard/core';
import { GraphCompileError } from './graph-errors.js';
import { END, type GraphNode, type GraphRoute, type GraphState, type GraphView } from './graph-types.js';

const NAME = /^[A-Za-z0-9_-]{1,48}$/;

/** A graph as the builder collected it, before it is checked. */
export interface GraphDraft {
  name: string;
  nodes: GraphNode<GraphState>[];
  edges: Array<{ from: string; to: string }>;
  routes: Array<{ from: string; route: GraphRoute<GraphState>; targets: readonly string[] }>;
  entry?: string;
}

/** A checked graph: its nodes by name, each node's plain targets and routes. */
export interface CheckedGraph {
  entry: string;
  nodes: ReadonlyMap<string, GraphNode<GraphState>>;
  edges: ReadonlyMap<string, readonly string[]>;
  routes: ReadonlyMap<string, ReadonlyArray<{ route: GraphRoute<GraphState>; targets: readonly string[] }>>;
}

/**
 * Checks a graph, failing with one clear {@link GraphCompileError} at the
 * first problem: a bad or duplicate node name, no entry, an edge from the
 * end, an edge or route naming an unknown node, an agent node whose agent
 * is not in `agents` (when given), a node unreachable from the entry.
 */
export function checkGraph(draft: GraphDraft, agents: readonly AgentLike[] | undefined): CheckedGraph {
  const graph = draft.name;
  const fail = (problem: string): never => {
    throw new GraphCompileError({ graph, problem });
  };
  const nodes = new Map<string, GraphNode<GraphState>>();
  for (const node of draft.nodes) {
    if (node.name === END) fail(`'${END}' is the end, not a node name`);
    if (!NAME.test(node.name)) fail(`node name '${node.name}' must be 1-48 letters, digits, _ or -`);
    if (nodes.has(node.name)) fail(`two nodes are named '${node.name}'`);
    nodes.set(node.name, node);
  }
  if (draft.entry === undefined) fail('it has no entry node: call .entry(name)');
  const entry = draft.entry as string;
  if (!nodes.has(entry))
    fail(`the entry '${entry}' is not a node (nodes: ${[...nodes.keys()].join(', ') || 'none'})`);
  // The builder's type rejects unknown names it can see; names computed at run time are checked here.
  const known = (name: string, where: string) => {
    if (name !== END && !nodes.has(name))
      fail(`${where} names an unknown node '${name}' (nodes: ${[...nodes.keys()].join(', ')})`);
  };
  const edges = new Map<string, string[]>();
  for (const { from, to } of draft.edges) {
    if (from === END) fail(`an edge leaves the end (${END} → ${to}): nothing runs after the end`);
    known(from, `the edge ${from} → ${to}`);
    known(to, `the edge ${from} → ${to}`);
    edges.set(from, [...(edges.get(from) ?? []), to]);
  }
  const routes = new Map<string, Array<{ route: GraphRoute<GraphState>; targets: readonly string[] }>>();
  for (const { from, route, targets } of draft.routes) {
    if (from === END) fail(`a conditional edge leaves the end (${END}): nothing runs after the end`);
    known(from, `the conditional edge from '${from}'`);
    if (typeof route !== 'function') fail(`the conditional edge from '${from}' needs a route function`);
    if (!Array.isArray(targets) || targets.length === 0)
      fail(`the conditional edge from '${from}' must list the nodes its route may pick`);
    for (const target of targets) known(target, `the conditional edge from '${from}'`);
    routes.set(from, [...(routes.get(from) ?? []), { route, targets: [...targets] }]);
  }
  if (agents) {
    const names = new Set(agents.map((agent) => agent.name));
    for (const node of nodes.values()) {
      if (node.kind === 'agent' && !names.has(node.agent))
        fail(
          `node '${node.name}' calls agent '${node.agent}', which is not one of its agents (${[...names].join(', ') || 'none'})`,
        );
    }
  }
  const reached = new Set<string>([entry]);
  const queue = [entry];
  while (queue.length > 0) {
    const from = queue.shift() as string;
    const targets = [
      ...(edges.get(from) ?? []),
      ...(routes.get(from) ?? []).flatMap((entry) => entry.targets),
    ];
    for (const target of targets) {
      if (target === END || reached.has(target)) continue;
      reached.add(target);
      queue.push(target);
    }
  }
  for (const name of nodes.keys()) {
    if (!reached.has(name)) fail(`node '${name}' is unreachable from the entry '${entry}'`);
  }
  return { entry, nodes, edges, routes };
}

/** The Mermaid id of a node (the end and the start have their own). */
function mermaidId(name: string): string {
  return name === END ? 'END' : `n_${name.replaceAll('-', '_')}`;
}

function shape(node: GraphNode<GraphState>): string {
  const label = node.name;
  switch (node.kind) {
    case 'agent':
      return `[${label}]`;
    case 'function':
      return `(${label})`;
    case 'orchestrator':
      return `[[${label}]]`;
    case 'input':
      return `[/${label}/]`;
  }
}

/**
 * The graph as a Mermaid flowchart: agent nodes as boxes, function nodes
 * rounded, nested orchestrators as subroutines, input nodes as
 * parallelograms; conditional edges dotted; nodes that need approval in
 * class `approval`; `highlight` (a turn's path) in class `taken`.
 */
export function toMermaid(checked: CheckedGraph, highlight: readonly string[] = []): string {
  const lines = [`flowchart TD`, `  START([start]):::terminal --> ${mermaidId(checked.entry)}`];
  for (const node of checked.nodes.values()) lines.push(`  ${mermaidId(node.name)}${shape(node)}`);
  const ends = new Set<string>();
  for (const node of checked.nodes.values()) {
    const plain = checked.edges.get(node.name) ?? [];
    const conditional = (checked.routes.get(node.name) ?? []).flatMap((entry) => entry.targets);
    for (const target of plain) lines.push(`  ${mermaidId(node.name)} --> ${mermaidId(target)}`);
    for (const target of conditional) lines.push(`  ${mermaidId(node.name)} -.-> ${mermaidId(target)}`);
    if (plain.length === 0 && conditional.length === 0) ends.add(node.name);
    if ([...plain, ...conditional].includes(END)) ends.delete(node.name);
  }
  for (const name of ends) lines.push(`  ${mermaidId(name)} --> END`);
  lines.push(`  END([end]):::terminal`);
  lines.push('  classDef terminal fill:#eef,stroke:#557');
  lines.push('  classDef approval stroke:#b60,stroke-width:2px');
  lines.push('  classDef taken fill:#ffe9a8,stroke:#b80,stroke-width:3px');
  const approvals = [...checked.nodes.values()].filter((node) => node.kind !== 'input' && node.approval);
  if (approvals.length > 0)
    lines.push(`  class ${approvals.map((node) => mermaidId(node.name)).join(',')} approval`);
  const taken = [...new Set(highlight)].filter((name) => checked.nodes.has(name));
  if (taken.length > 0) lines.push(`  class ${taken.map(mermaidId).join(',')} taken`);
  return `${lines.join('\n')}\n`;
}

/** The graph's view for clients: its nodes, its edges and its picture. */
export function graphView(graph: string, checked: CheckedGraph): GraphView {
  const nodes = [...checked.nodes.values()].map((node) => {
    const view: GraphView['nodes'][number] = { name: node.name, kind: node.kind };
    if (node.description) view.description = node.description;
    if (node.kind !== 'input' && node.approval) view.approval = true;
    return view;
  });
  const edges: GraphView['edges'] = [];
  for (const [from, targets] of checked.edges) for (const to of targets) edges.push({ from, to });
  for (const [from, entries] of checked.routes)
    for (const { targets } of entries) for (const to of targets) edges.push({ from, to, conditional: true });
  return { name: graph, entry: checked.entry, nodes, edges, mermaid: toMermaid(checked) };
}
