import { spawnSync } from 'node:child_process';

/** One sample of the Prometheus text format. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE =
  /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*)\})? (\S+)(?: -?\d+)?$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** The samples of a Prometheus text exposition. */
export function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = SAMPLE.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels[key as string] = value as string;
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** `promtool check metrics` on `text`, or undefined when promtool is not on the PATH. */
export function promtoolCheck(text: string): { status: number | null; output: string } | undefined {
  const run = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if ((run.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') return undefined;
  return { status: run.status, output: `${run.stdout}${run.stderr}`.trim() };
}

/**
 * The problems a strict reading of the text format (version 0.0.4) and
 * promtool's naming lints find: malformed lines, a sample before its
 * family's TYPE, a family declared twice, a counter without `_total`, a unit
 * other than seconds or bytes in a name, a histogram whose buckets are not
 * cumulative or whose `+Inf` bucket differs from its count. Empty when clean.
 */
export function expositionProblems(text: string): string[] {
  const problems: string[] = [];
  const types = new Map<string, string>();
  const buckets = new Map<string, { le: number; value: number }[]>();
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const declared = /^# (HELP|TYPE|UNIT) ([a-zA-Z_:][a-zA-Z0-9_:]*)(?: (.*))?$/.exec(line);
    if (declared) {
      const [, kind, name, rest = ''] = declared as unknown as [string, string, string, string?];
      if (kind === 'TYPE') {
        if (types.has(name)) problems.push(`${name}: declared twice`);
        if (!TYPES.has(rest)) problems.push(`${name}: unknown type ${rest}`);
        types.set(name, rest);
        if (rest === 'counter' && !name.endsWith('_total')) problems.push(`${name}: counter without _total`);
        if (/_(ms|milliseconds|microseconds|nanoseconds|minutes|hours)(_|$)/.test(name))
          problems.push(`${name}: use base units (seconds)`);
      }
      continue;
    }
    if (line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) {
      problems.push(`malformed line: ${line}`);
      continue;
    }
    const name = match[1] as string;
    const value = Number(match[3]);
    if (Number.isNaN(value) && match[3] !== 'NaN') problems.push(`${name}: value ${match[3]}`);
    const family = [...types.keys()].find(
      (declaredName) =>
        name === declaredName ||
        (/^_(bucket|sum|count|total)$/.test(name.slice(declaredName.length)) &&
          name.startsWith(declaredName)),
    );
    if (family === undefined) {
      problems.push(`${name}: sample before its TYPE`);
      continue;
    }
    if (types.get(family) !== 'histogram') continue;
    const labels = (match[2] ?? '').replace(/,?le="[^"]*"/, '');
    if (name.endsWith('_bucket')) {
      const le = /le="([^"]*)"/.exec(match[2] ?? '')?.[1];
      if (le === undefined) problems.push(`${name}: bucket without le`);
      const series = `${family}{${labels}}`;
      const list = buckets.get(series) ?? [];
      list.push({ le: le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le), value });
      buckets.set(series, list);
    } else if (name.endsWith('_count')) counts.set(`${family}{${labels}}`, value);
  }
  for (const [series, list] of buckets) {
    for (let index = 1; index < list.length; index++) {
      const previous = list[index - 1] as { le: number; value: number };
      const current = list[index] as { le: number; value: number };
      if (current.le <= previous.le || current.value < previous.value)
        problems.push(`${series}: buckets not ascending and cumulative`);
    }
    const last = list.at(-1);
    if (last?.le !== Number.POSITIVE_INFINITY) problems.push(`${series}: no +Inf bucket`);
    else if (counts.get(series) !== last.value) problems.push(`${series}: +Inf bucket differs from _count`);
  }
  return problems;
}
