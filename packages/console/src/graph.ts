import type { GraphInfo } from './types.js';

const SVG = 'http://www.w3.org/2000/svg';
const END = '__end__';
const START = '__start__';
const NODE_WIDTH = 116;
const NODE_HEIGHT = 32;
const LAYER_GAP = 64;
const COLUMN_GAP = 20;

type Attributes = Record<string, string | number>;

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attributes: Attributes = {}, text?: string) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  if (text !== undefined) element.textContent = text;
  return element;
}

/** Each node's layer: its shortest distance from the start (the start 0, the entry 1), the end below all. */
function layers(graph: GraphInfo): Map<string, number> {
  const out = new Map<string, string[]>();
  for (const { from, to } of graph.edges) out.set(from, [...(out.get(from) ?? []), to]);
  const layer = new Map<string, number>([
    [START, 0],
    [graph.entry, 1],
  ]);
  const queue = [graph.entry];
  while (queue.length > 0) {
    const node = queue.shift() as string;
    for (const next of out.get(node) ?? []) {
      if (next === END || layer.has(next)) continue;
      layer.set(next, (layer.get(node) as number) + 1);
      queue.push(next);
    }
  }
  for (const node of graph.nodes) if (!layer.has(node.name)) layer.set(node.name, 1);
  layer.set(END, Math.max(...layer.values()) + 1);
  return layer;
}

/** The edges to draw: the graph's, the start's, and to the end from every node without an edge. */
function allEdges(graph: GraphInfo): Array<{ from: string; to: string; conditional?: boolean }> {
  const edges = [{ from: START, to: graph.entry }, ...graph.edges];
  for (const node of graph.nodes)
    if (!graph.edges.some((edge) => edge.from === node.name)) edges.push({ from: node.name, to: END });
  return edges;
}

function nodeShape(kind: string, x: number, y: number): SVGElement {
  const [w, h] = [NODE_WIDTH, NODE_HEIGHT];
  if (kind === 'input') {
    const slant = 10;
    const points = [
      [x - w / 2 + slant, y - h / 2],
      [x + w / 2, y - h / 2],
      [x + w / 2 - slant, y + h / 2],
      [x - w / 2, y + h / 2],
    ];
    return svg('polygon', { points: points.map((point) => point.join(',')).join(' ') });
  }
  const round = kind === 'function' || kind === 'terminal' ? h / 2 : 3;
  return svg('rect', { x: x - w / 2, y: y - h / 2, width: w, height: h, rx: round, ry: round });
}

/**
 * Draws a published graph as SVG, top to bottom by distance from the
 * entry: agent nodes as boxes, function nodes rounded, nested orchestrators
 * double-framed (class), input nodes slanted; conditional edges dashed;
 * nodes that need approval and the nodes in `taken` (a turn's path) marked
 * by class. Styled by the page's stylesheet (no inline styles: the page's
 * policy refuses them).
 */
export function renderGraph(graph: GraphInfo, taken: ReadonlySet<string>): SVGSVGElement {
  const layer = layers(graph);
  const rows = new Map<number, string[]>();
  for (const name of [START, ...graph.nodes.map((node) => node.name), END]) {
    const row = layer.get(name) as number;
    rows.set(row, [...(rows.get(row) ?? []), name]);
  }
  const widest = Math.max(...[...rows.values()].map((row) => row.length));
  const width = widest * (NODE_WIDTH + COLUMN_GAP) + COLUMN_GAP * 2;
  const height = (Math.max(...rows.keys()) + 1) * LAYER_GAP + NODE_HEIGHT;
  const position = new Map<string, { x: number; y: number }>();
  for (const [row, names] of rows) {
    names.forEach((name, index) => {
      position.set(name, {
        x: ((index + 0.5) * width) / names.length,
        y: row * LAYER_GAP + NODE_HEIGHT / 2 + 8,
      });
    });
  }
  const root = svg('svg', {
    class: 'graph-picture',
    viewBox: `0 0 ${width} ${height}`,
    role: 'img',
    'aria-label': `Graph ${graph.name}`,
  });
  const marker = svg('marker', {
    id: 'graph-arrow',
    viewBox: '0 0 10 10',
    refX: 10,
    refY: 5,
    markerWidth: 7,
    markerHeight: 7,
    orient: 'auto-start-reverse',
  });
  marker.append(svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'graph-arrow' }));
  const defs = svg('defs');
  defs.append(marker);
  root.append(defs);

  for (const edge of allEdges(graph)) {
    const from = position.get(edge.from);
    const to = position.get(edge.to);
    if (!from || !to) continue;
    const forward = to.y > from.y;
    const d = forward
      ? `M ${from.x} ${from.y + NODE_HEIGHT / 2} L ${to.x} ${to.y - NODE_HEIGHT / 2}`
      : // A loop or a back edge goes round the right-hand side.
        `M ${from.x + NODE_WIDTH / 2} ${from.y} C ${from.x + NODE_WIDTH} ${from.y}, ${to.x + NODE_WIDTH} ${to.y}, ${to.x + NODE_WIDTH / 2} ${to.y}`;
    const classes = ['graph-edge'];
    if (edge.conditional) classes.push('conditional');
    if ((taken.has(edge.from) || edge.from === START) && taken.has(edge.to)) classes.push('taken');
    root.append(svg('path', { d, class: classes.join(' '), 'marker-end': 'url(#graph-arrow)' }));
  }

  const kinds = new Map(graph.nodes.map((node) => [node.name, node]));
  for (const [name, { x, y }] of position) {
    const node = kinds.get(name);
    const kind = node?.kind ?? 'terminal';
    const classes = ['graph-node', `kind-${kind}`];
    if (node?.approval) classes.push('approval');
    if (taken.has(name)) classes.push('taken');
    const group = svg('g', { class: classes.join(' '), 'data-node': name });
    const label = name === START ? 'start' : name === END ? 'end' : name;
    group.append(svg('title', {}, node?.description ? `${label}: ${node.description}` : label));
    group.append(nodeShape(kind, x, y));
    group.append(svg('text', { x, y, 'text-anchor': 'middle', 'dominant-baseline': 'central' }, label));
    root.append(group);
  }
  return root;
}

/** The graph nodes a turn's steps went through (their `graphNodes` annotations). */
export function pathOf(steps: ReadonlyArray<{ annotations?: Record<string, unknown> }>): Set<string> {
  const nodes = new Set<string>();
  for (const step of steps) {
    const named = step.annotations?.graphNodes;
    if (Array.isArray(named)) for (const node of named) if (typeof node === 'string') nodes.add(node);
  }
  return nodes;
}
