// Summarises what the heap gained between two V8 heap snapshots (bench/churn.ts writes them with
// BENCH_CHURN_SNAPSHOT=<dir> around creating N idle sessions): bytes and objects per session by kind of
// object. Plain objects are named by their first property names, strings and backing stores by the
// object and property that hold them, so a line reads like "string ← {id,role,content,…}.createdAt".
//   pnpm tsx bench/heap-summary.ts <before.heapsnapshot> <after.heapsnapshot> <sessions> [top=25]
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: {
    meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

const STRING_TYPES = new Set(['string', 'concatenated string', 'sliced string']);

/** Self bytes and object counts per kind of object in one snapshot. */
export function kinds(snapshot: Snapshot): Map<string, { bytes: number; count: number }> {
  const { meta } = snapshot.snapshot;
  const nodeWidth = meta.node_fields.length;
  const edgeWidth = meta.edge_fields.length;
  const [typeAt, nameAt, sizeAt, edgeCountAt] = ['type', 'name', 'self_size', 'edge_count'].map((f) =>
    meta.node_fields.indexOf(f),
  ) as [number, number, number, number];
  const [edgeTypeAt, edgeNameAt, edgeToAt] = ['type', 'name_or_index', 'to_node'].map((f) =>
    meta.edge_fields.indexOf(f),
  ) as [number, number, number];
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const { nodes, edges, strings } = snapshot;
  const count = nodes.length / nodeWidth;
  // The first edge of each node, and for each node the first (owner, edge name) that retains it.
  const firstEdge = new Uint32Array(count + 1);
  for (let node = 0, edge = 0; node < count; node++) {
    firstEdge[node] = edge;
    edge += nodes[node * nodeWidth + edgeCountAt]! * edgeWidth;
  }
  firstEdge[count] = edges.length;
  const owner = new Int32Array(count).fill(-1);
  const ownerEdge: string[] = new Array(count);
  const label = new Array<string>(count);
  for (let node = 0; node < count; node++) {
    const type = nodeTypes[nodes[node * nodeWidth + typeAt]!]!;
    const name = strings[nodes[node * nodeWidth + nameAt]!]!;
    const properties: string[] = [];
    for (let edge = firstEdge[node]!; edge < firstEdge[node + 1]!; edge += edgeWidth) {
      const edgeType = edgeTypes[edges[edge + edgeTypeAt]!]!;
      const to = edges[edge + edgeToAt]! / nodeWidth;
      const edgeName =
        edgeType === 'element' || edgeType === 'hidden'
          ? `[${edges[edge + edgeNameAt]}]`
          : strings[edges[edge + edgeNameAt]!]!;
      if (edgeType === 'property' && properties.length < 5) properties.push(edgeName);
      if (edgeType !== 'weak' && owner[to] === -1) {
        owner[to] = node;
        ownerEdge[to] = edgeType === 'element' ? '[]' : edgeName;
      }
    }
    label[node] =
      type === 'object' && name === 'Object'
        ? `{${properties.join(',')}${properties.length === 5 ? ',…' : ''}}`
        : type === 'closure'
          ? `closure ${name || '(anonymous)'}`
          : type === 'object'
            ? name
            : `(${type}) ${name.slice(0, 40)}`;
  }
  const totals = new Map<string, { bytes: number; count: number }>();
  for (let node = 0; node < count; node++) {
    const type = nodeTypes[nodes[node * nodeWidth + typeAt]!]!;
    const held =
      STRING_TYPES.has(type) ||
      type === 'array' ||
      type === 'hidden' ||
      type === 'number' ||
      type === 'object shape';
    const parent = owner[node]!;
    const key =
      held && parent >= 0
        ? `${STRING_TYPES.has(type) ? 'string' : label[node]} ← ${label[parent]}.${ownerEdge[node]}`
        : label[node]!;
    const entry = totals.get(key) ?? { bytes: 0, count: 0 };
    entry.bytes += nodes[node * nodeWidth + sizeAt]!;
    entry.count += 1;
    totals.set(key, entry);
  }
  return totals;
}

const [beforeFile, afterFile, sessionsArgument, topArgument] = process.argv.slice(2);
if (beforeFile && afterFile && sessionsArgument) {
  const sessions = Number(sessionsArgument);
  const top = Number(topArgument ?? 25);
  const read = (file: string) => kinds(JSON.parse(readFileSync(file, 'utf8')) as Snapshot);
  const before = read(beforeFile);
  const after = read(afterFile);
  const grown = [...after]
    .map(([key, { bytes, count }]) => ({
      key,
      bytes: (bytes - (before.get(key)?.bytes ?? 0)) / sessions,
      count: (count - (before.get(key)?.count ?? 0)) / sessions,
    }))
    .filter(({ bytes }) => bytes > 0)
    .sort((a, b) => b.bytes - a.bytes);
  const total = grown.reduce((sum, { bytes }) => sum + bytes, 0);
  console.log(
    `${total.toFixed(0)} bytes per session gained (self sizes of kinds that grew), over ${sessions} sessions\n`,
  );
  console.log('B/session  objects/session  kind');
  for (const { key, bytes, count } of grown.slice(0, top))
    console.log(`${bytes.toFixed(0).padStart(9)}  ${count.toFixed(2).padStart(15)}  ${key}`);
}
