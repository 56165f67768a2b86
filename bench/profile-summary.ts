// Summarises a V8 CPU profile (`node --cpu-prof`): the functions with the most self time, and the same
// grouped by file, with µs per turn when told how many turns the profile covers.
//   pnpm tsx bench/profile-summary.ts <file.cpuprofile> [turns] [top=15]
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A short, stable name for a script: its path inside the repository or under node_modules, else the URL. */
export function shortUrl(url: string): string {
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0)
    return url.slice(modules + '/node_modules/'.length).replace(/^\.pnpm\/[^/]+\/node_modules\//, '');
  return (
    url.replace(/^file:\/\/.*?\/(packages|bench|apps)\//, '$1/').replace(/^node:/, 'node:') || '(native)'
  );
}

/**
 * The source file of each line of an esbuild bundle (bench/compile.ts output), from the `// path.ts`
 * comment esbuild writes before each module, so that bundled functions are named by their source file.
 */
function bundleSources(url: string): ((line: number) => string) | undefined {
  if (!url.startsWith('file://') || !url.endsWith('.mjs')) return undefined;
  const starts: Array<[number, string]> = [];
  readFileSync(fileURLToPath(url), 'utf8')
    .split('\n')
    .forEach((text, line) => {
      const match = /^\/\/ (\S+\.ts)$/.exec(text);
      if (match) starts.push([line, match[1]!.replace(/^(\.\.\/)+/, '')]);
    });
  return (line) => {
    let found = '(bundle)';
    for (const [start, path] of starts) {
      if (start > line) break;
      found = path;
    }
    return found;
  };
}

/** Self time in µs per function (`name url:line`) and per file. */
export function summarise(profile: CpuProfile): {
  byFunction: Map<string, number>;
  byFile: Map<string, number>;
  total: number;
} {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  let total = 0;
  const bundles = new Map<string, ((line: number) => string) | undefined>();
  const fileOf = (frame: ProfileNode['callFrame']) => {
    if (!bundles.has(frame.url)) bundles.set(frame.url, bundleSources(frame.url));
    return bundles.get(frame.url)?.(frame.lineNumber) ?? shortUrl(frame.url);
  };
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index + 1] ?? 0;
    const frame = nodes.get(id)?.callFrame;
    if (!frame) return;
    const file = fileOf(frame);
    const line = frame.url && file === shortUrl(frame.url) ? `:${frame.lineNumber + 1}` : '';
    const name = `${frame.functionName || '(anonymous)'} ${file}${line}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + delta);
    byFile.set(file, (byFile.get(file) ?? 0) + delta);
    total += delta;
  });
  return { byFunction, byFile, total };
}

function print(
  title: string,
  entries: Map<string, number>,
  total: number,
  top: number,
  turns?: number,
): void {
  console.log(`\n${title}\n`);
  for (const [name, micros] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    const perTurn = turns ? `${(micros / turns).toFixed(2).padStart(7)} µs/turn  ` : '';
    console.log(`${((100 * micros) / total).toFixed(1).padStart(5)}%  ${perTurn}${name}`);
  }
}

const [file, turnsArgument, topArgument] = process.argv.slice(2);
if (file) {
  const turns = turnsArgument ? Number(turnsArgument) : undefined;
  const top = Number(topArgument ?? 15);
  const { byFunction, byFile, total } = summarise(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile);
  console.log(
    `${(total / 1000).toFixed(0)} ms sampled${turns ? `, ${(total / turns).toFixed(1)} µs per turn over ${turns} turns` : ''}`,
  );
  print(`Top ${top} functions by self time`, byFunction, total, top, turns);
  print(`Top ${top} files by self time`, byFile, total, top, turns);
}
