/**
 * Finds every Switchboard error class in the sources (`packages/*\/src`, `apps/*\/src`) by reading
 * them as text, as TypeScript 7 has no JavaScript compiler API. It relies on the formatter's layout
 * (biome): a top-level class starts at column 0 and ends at the first line that is `}`, its members
 * sit two spaces in. What it cannot read (an error class without TSDoc, a retryable getter that
 * varies without saying how), it refuses rather than guesses.
 *
 * @module
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Whether an error class is retryable: always or never, for some of its codes, or as its getter's TSDoc says. */
export type Retryable = { always: boolean } | { codes: readonly string[] } | { varies: string };

/** One error class as its source declares it. */
interface ClassSource {
  name: string;
  base: string;
  file: string;
  packageName: string;
  exported: boolean;
  summary?: string;
  /** The codes it declares (several for a union type, `dynamic` for `string`); undefined when it inherits one. */
  codes?: readonly string[] | 'dynamic';
  retryable?: Retryable;
}

/** A concrete error class: what `docs/reference/error-codes.md` says of it. */
export interface ErrorClass {
  name: string;
  /** Its source file, relative to the repository. */
  file: string;
  /** The package it lives in, e.g. `@switchboard/core`. */
  packageName: string;
  /** False for a class its file does not export (its code still reaches orchestrators and clients). */
  exported: boolean;
  kind: 'user' | 'system';
  /** Its codes; `dynamic` when it carries a code it is given. */
  codes: readonly string[] | 'dynamic';
  /** The ancestor whose code it carries, when it declares none of its own. */
  codeFrom?: string;
  retryable: Retryable;
  /** The ancestor that decides `retryable`, when the class itself does not. */
  retryableFrom?: string;
  /** The first paragraph of its TSDoc. */
  summary: string;
}

/** The first paragraph of the TSDoc block that ends on the line before `line`, as one line. */
function summaryAbove(lines: readonly string[], line: number): string | undefined {
  if (!lines[line - 1]?.trimEnd().endsWith('*/')) return undefined;
  let start = line - 1;
  while (start > 0 && !lines[start]?.trimStart().startsWith('/**')) start--;
  const text: string[] = [];
  for (const raw of lines.slice(start, line)) {
    const content = raw
      .trim()
      .replace(/^\/\*\*\s?/, '')
      .replace(/\*\/$/, '')
      .replace(/^\*\s?/, '')
      .trim();
    if (content.startsWith('@') || (content === '' && text.length > 0)) break;
    if (content) text.push(content);
  }
  return text
    .join(' ')
    .replace(/\{@link ([^}]+)\}/g, '`$1`')
    .trim();
}

/** How a class body decides `retryable`: a getter, or a literal it passes to its base's constructor. */
function retryableOf(body: readonly string[], className: string): Retryable | undefined {
  const getter = body.findIndex((line) => /^ {2}(override )?get retryable\(\)/.test(line));
  if (getter >= 0) {
    const end = body.findIndex((line, index) => index > getter && line === '  }');
    const statements = body.slice(getter + 1, end).map((line) => line.trim());
    const literal = statements.length === 1 ? /^return (true|false);$/.exec(statements[0] ?? '') : null;
    if (literal) return { always: literal[1] === 'true' };
    const doc = summaryAbove(body, getter);
    if (!doc) throw new Error(`${className}: its retryable getter varies; give it a TSDoc line saying when`);
    return { varies: doc };
  }
  const text = body.join('\n');
  const literal = /\bretryable: (true|false)\b/.exec(text);
  if (literal) return { always: literal[1] === 'true' };
  const byCode = /\bretryable: ((?:code === '[a-z0-9_]+'(?: \|\| )?)+)/.exec(text);
  if (byCode?.[1])
    return { codes: [...byCode[1].matchAll(/'([a-z0-9_]+)'/g)].map((match) => match[1] ?? '') };
  return undefined;
}

/** The codes a class body declares with `readonly code`, if it does. */
function codesOf(body: readonly string[]): readonly string[] | 'dynamic' | undefined {
  const start = body.findIndex((line) => /^ {2}(override )?readonly code\b/.test(line));
  if (start < 0) return undefined;
  const end = body.findIndex((line, index) => index >= start && line.includes(';'));
  const declaration = body.slice(start, end + 1).join(' ');
  const codes = [...declaration.matchAll(/'([a-z0-9_]+)'/g)].map((match) => match[1] ?? '');
  return codes.length > 0 ? codes : 'dynamic';
}

/** The classes one source file declares at its top level. */
function classesIn(path: string, file: string, packageName: string): ClassSource[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  const classes: ClassSource[] = [];
  lines.forEach((line, index) => {
    const header = /^(export )?(?:abstract )?class (\w+) extends (\w+)/.exec(line);
    if (!header?.[2] || !header[3]) return;
    const end = line.trimEnd().endsWith('{}') ? index : lines.indexOf('}', index);
    const body = lines.slice(index + 1, Math.max(end, index + 1));
    classes.push({
      name: header[2],
      base: header[3],
      file,
      packageName,
      exported: Boolean(header[1]),
      summary: summaryAbove(lines, index),
      codes: codesOf(body),
      retryable: retryableOf(body, header[2]),
    });
  });
  return classes;
}

/** Every `.ts` file under `directory`. */
function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every class of the workspace's sources under `root`, by name (a name may have several). */
function allClasses(root: string): Map<string, ClassSource[]> {
  const byName = new Map<string, ClassSource[]>();
  for (const group of ['packages', 'apps']) {
    if (!existsSync(join(root, group))) continue;
    for (const name of readdirSync(join(root, group)).sort()) {
      const directory = join(root, group, name);
      if (!existsSync(join(directory, 'src')) || !existsSync(join(directory, 'package.json'))) continue;
      const packageName = (
        JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as { name: string }
      ).name;
      for (const path of sourceFiles(join(directory, 'src')).sort()) {
        for (const found of classesIn(path, relative(root, path), packageName)) {
          byName.set(found.name, [...(byName.get(found.name) ?? []), found]);
        }
      }
    }
  }
  return byName;
}

/**
 * Every concrete error class (a subclass of `UserError` or `SystemError`) in the sources under
 * `root`, sorted by name, with its kind, codes and retryability resolved through its ancestors.
 */
export function errorClasses(root: string): ErrorClass[] {
  const byName = allClasses(root);
  const found: ErrorClass[] = [];
  for (const self of [...byName.values()].flat()) {
    const chain = [self];
    for (let base = byName.get(self.base); base?.[0] && chain.length < 50; base = byName.get(base[0].base)) {
      if (base.length > 1) throw new Error(`${self.name} extends ${base[0].name}, which is declared twice`);
      chain.push(base[0]);
    }
    const names = chain.map((source) => source.name);
    const kind = names.includes('UserError') ? 'user' : names.includes('SystemError') ? 'system' : undefined;
    if (!kind || self.name === 'UserError' || self.name === 'SystemError') continue;
    if (found.some((other) => other.name === self.name))
      throw new Error(`Two error classes are named ${self.name}`);
    const withCode = chain.find((source) => source.codes !== undefined);
    if (!withCode?.codes) throw new Error(`${self.name} (${self.file}) has no code`);
    const withRetryable = chain.find((source) => source.retryable);
    if (!self.summary) throw new Error(`${self.name} (${self.file}) has no TSDoc`);
    found.push({
      name: self.name,
      file: self.file,
      packageName: self.packageName,
      exported: self.exported,
      kind,
      codes: withCode.codes,
      ...(withCode === self ? {} : { codeFrom: withCode.name }),
      retryable: withRetryable?.retryable ?? { always: false },
      ...(withRetryable && withRetryable !== self ? { retryableFrom: withRetryable.name } : {}),
      summary: self.summary,
    });
  }
  return found.sort((a, b) => a.name.localeCompare(b.name));
}
