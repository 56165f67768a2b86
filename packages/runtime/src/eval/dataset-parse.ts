import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { ValidationError } from '@switchboard/core';
import type { z } from 'zod';
import { DATASET_LIMITS, type Dataset, type EvalCase, EvalCaseSchema } from './dataset.js';

/** How many problems a {@link DatasetError} lists before it stops counting. */
const MAX_LISTED = 20;

/**
 * A dataset that does not parse or validate. `issues` holds one line per
 * problem, each starting with `<source>:<line>:` (at most 20 are listed).
 */
export class DatasetError extends ValidationError {
  constructor({ source, issues }: { source: string; issues: readonly string[] }) {
    super({ message: `Invalid dataset ${source}`, issues });
  }
}

/** Options of {@link parseDataset}. */
export interface ParseDatasetOptions {
  /** `jsonl` (default) or `yaml` (needs the `yaml` package, an optional peer dependency). */
  format?: 'jsonl' | 'yaml';
  /** The file name used in error lines and case sources (default `dataset`). */
  source?: string;
  /** The dataset's name (default: `source` without directory and extension). */
  name?: string;
}

/** A case value found at a line, before validation. */
interface RawCase {
  line: number;
  value: unknown;
  /** The line of a field, by its path, where the format can tell. */
  lineOf?: (path: readonly PropertyKey[]) => number | undefined;
}

function issueLines(source: string, raw: RawCase, error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const line = raw.lineOf?.(issue.path) ?? raw.line;
    const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
    return `${source}:${line}: ${where}${issue.message}`;
  });
}

function jsonlCases(text: string, source: string, problems: string[]): RawCase[] {
  const cases: RawCase[] = [];
  const lines = text.split(/\r?\n/);
  for (let index = 0; index < lines.length; index++) {
    const line = (lines[index] as string).trim();
    if (line === '' || line.startsWith('//')) continue;
    try {
      cases.push({ line: index + 1, value: JSON.parse(line) });
    } catch (error) {
      problems.push(`${source}:${index + 1}: not JSON (${(error as Error).message})`);
    }
  }
  return cases;
}

async function yamlCases(text: string, source: string, problems: string[]): Promise<RawCase[]> {
  let yaml: typeof import('yaml');
  try {
    yaml = await import('yaml');
  } catch {
    throw new ValidationError({
      message: `Reading the YAML dataset ${source} needs the 'yaml' package: install it beside @switchboard/runtime`,
    });
  }
  const counter = new yaml.LineCounter();
  const document = yaml.parseDocument(text, { lineCounter: counter, prettyErrors: false });
  const lineAt = (offset: number) => counter.linePos(offset).line;
  for (const error of document.errors) problems.push(`${source}:${lineAt(error.pos[0])}: ${error.message}`);
  if (document.errors.length > 0) return [];
  const root = document.contents;
  const list = yaml.isMap(root) ? root.get('cases', true) : root;
  if (!yaml.isSeq(list)) {
    problems.push(`${source}:1: expected a list of cases (or a map with a 'cases' list)`);
    return [];
  }
  return list.items.map((item) => {
    const line = yaml.isNode(item) && item.range ? lineAt(item.range[0]) : 1;
    const lineOf = (path: readonly PropertyKey[]) => {
      if (!yaml.isCollection(item)) return undefined;
      const node = item.getIn(path as unknown[], true);
      return yaml.isNode(node) && node.range ? lineAt(node.range[0]) : undefined;
    };
    return { line, value: yaml.isNode(item) ? item.toJSON() : item, lineOf };
  });
}

/**
 * Parses and validates a dataset: JSONL (one case per line; blank lines and
 * lines starting with `//` are skipped) or YAML (a list of cases, or a map
 * with a `cases` list). Every problem is reported at once, with its line.
 *
 * @throws DatasetError listing each problem as `<source>:<line>: <path>: <message>`.
 *
 * @example
 * ```ts
 * const dataset = await parseDataset('{"input":"what time is it?","expect":{"agent":"clock"}}');
 * ```
 */
export async function parseDataset(
  text: string,
  { format = 'jsonl', source = 'dataset', name }: ParseDatasetOptions = {},
): Promise<Dataset> {
  const problems: string[] = [];
  const raws =
    format === 'yaml' ? await yamlCases(text, source, problems) : jsonlCases(text, source, problems);
  if (raws.length > DATASET_LIMITS.cases)
    problems.push(`${source}:1: ${raws.length} cases, more than the ${DATASET_LIMITS.cases} allowed`);
  const cases: EvalCase[] = [];
  const lineOfId = new Map<string, number>();
  raws.forEach((raw, index) => {
    const parsed = EvalCaseSchema.safeParse(raw.value);
    if (!parsed.success) {
      problems.push(...issueLines(source, raw, parsed.error));
      return;
    }
    const id = parsed.data.id ?? (format === 'yaml' ? `case-${index + 1}` : `case-${raw.line}`);
    const earlier = lineOfId.get(id);
    if (earlier !== undefined)
      problems.push(`${source}:${raw.line}: id: '${id}' is also the id at line ${earlier}`);
    lineOfId.set(id, raw.line);
    cases.push({ ...parsed.data, id, source: `${source}:${raw.line}` });
  });
  if (problems.length === 0 && cases.length === 0) problems.push(`${source}:1: the dataset has no cases`);
  if (problems.length > 0) {
    const lineOf = (problem: string) => Number.parseInt(problem.slice(source.length + 1), 10);
    const listed = problems.sort((left, right) => lineOf(left) - lineOf(right)).slice(0, MAX_LISTED);
    if (problems.length > MAX_LISTED) listed.push(`… and ${problems.length - MAX_LISTED} more`);
    throw new DatasetError({ source, issues: listed });
  }
  return { name: name ?? basename(source, extname(source)), cases };
}

/**
 * Reads and parses a dataset file: `.yaml`/`.yml` as YAML, anything else as
 * JSONL (see {@link parseDataset}).
 *
 * @example
 * ```ts
 * const dataset = await loadDataset('evals/routing.jsonl');
 * ```
 */
export async function loadDataset(path: string): Promise<Dataset> {
  const format = /\.ya?ml$/i.test(path) ? 'yaml' : 'jsonl';
  return await parseDataset(await readFile(path, 'utf8'), { format, source: path });
}
