/**
 * The API report: for every entry point (each `exports` subpath) of every
 * published package, the names it exports, what each is (class, function,
 * const, interface, type, enum, namespace), whether it is a type only, and
 * whether it is deprecated. One committed file per entry point under `api/`;
 * a test compares them with the sources, so every change to the public
 * surface shows as a diff in review.
 *
 * `pnpm api:update` rewrites the files. It reads the sources with the
 * TypeScript 6 compiler API (the repository type-checks with TypeScript 7,
 * which has no JavaScript API; this package carries a TypeScript 6 for
 * TypeDoc already).
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Where the committed reports live. */
export const API_DIR = `${ROOT}api/`;

/** One entry point of a published package. */
export interface ApiEntry {
  /** The import path a user writes, e.g. `@switchboard/runtime/redis`. */
  specifier: string;
  /** The entry's source file. */
  file: string;
  /** The report's file name under `api/`, e.g. `runtime.redis.api.md`. */
  reportName: string;
}

/** Every entry point of every published (not private) package under packages/, from its package.json `exports`. */
export function apiEntries(): ApiEntry[] {
  const packages = readdirSync(`${ROOT}packages`).sort();
  return packages.flatMap((folder) => {
    const manifest = JSON.parse(readFileSync(`${ROOT}packages/${folder}/package.json`, 'utf8')) as {
      name: string;
      private?: boolean;
      exports?: Record<string, string | { types?: string }>;
    };
    if (manifest.private) return [];
    return Object.entries(manifest.exports ?? {}).flatMap(([subpath, target]) => {
      const types = typeof target === 'string' ? undefined : target.types;
      // `./package.json` and other non-code exports have no types to report.
      if (!types?.endsWith('.ts')) return [];
      const entry = subpath === '.' ? 'index' : subpath.slice(2).replaceAll('/', '.');
      return [
        {
          specifier: `${manifest.name}${subpath.slice(1)}`,
          file: `${ROOT}packages/${folder}/${types.replace(/^\.\//, '')}`,
          reportName: `${folder}.${entry}.api.md`,
        },
      ];
    });
  });
}

/** What a declaration is, in the words of the report. */
function declarationKind(declaration: ts.Declaration): string {
  if (ts.isClassDeclaration(declaration)) return 'class';
  if (ts.isFunctionDeclaration(declaration)) return 'function';
  if (ts.isVariableDeclaration(declaration)) return 'const';
  if (ts.isInterfaceDeclaration(declaration)) return 'interface';
  if (ts.isTypeAliasDeclaration(declaration)) return 'type';
  if (ts.isEnumDeclaration(declaration)) return 'enum';
  if (ts.isModuleDeclaration(declaration) || ts.isSourceFile(declaration)) return 'namespace';
  return ts.SyntaxKind[declaration.kind];
}

/** Whether an alias (an `export { … }`, `import { … }` or `export *` hop) is written type-only. */
function isTypeOnlyAlias(declaration: ts.Declaration): boolean {
  if (ts.isExportSpecifier(declaration))
    return declaration.isTypeOnly || declaration.parent.parent.isTypeOnly;
  if (ts.isImportSpecifier(declaration))
    return declaration.isTypeOnly || declaration.parent.parent.isTypeOnly;
  if (ts.isImportClause(declaration)) return declaration.isTypeOnly;
  if (ts.isExportDeclaration(declaration)) return declaration.isTypeOnly;
  return false;
}

/** One exported name, as the report lists it. */
export interface ApiExport {
  name: string;
  /** `class`, `function`, `const`, `interface`, `type`, `enum`, `namespace` (joined by `+` for merged ones). */
  kind: string;
  /** True when importing it gives a type only (an interface, or a class exported with `export type`). */
  typeOnly: boolean;
  deprecated: boolean;
}

/** The exports of each entry, read from the sources with one TypeScript program. */
export function readExports(entries: readonly ApiEntry[]): Map<string, ApiExport[]> {
  const program = ts.createProgram(
    entries.map((entry) => entry.file),
    {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      skipLibCheck: true,
      noEmit: true,
      types: ['node'],
    },
  );
  const checker = program.getTypeChecker();
  const result = new Map<string, ApiExport[]>();
  for (const entry of entries) {
    const source = program.getSourceFile(entry.file);
    const moduleSymbol = source && checker.getSymbolAtLocation(source);
    if (!moduleSymbol) throw new Error(`TypeScript could not read ${entry.specifier} (${entry.file})`);
    const exports = checker.getExportsOfModule(moduleSymbol).map((symbol): ApiExport => {
      let typeOnly = false;
      let target = symbol;
      // Follow the chain of re-exports; any hop written `type` makes the name a type only.
      for (let hops = 0; target.flags & ts.SymbolFlags.Alias && hops < 50; hops += 1) {
        if (target.declarations?.some(isTypeOnlyAlias)) typeOnly = true;
        target = checker.getImmediateAliasedSymbol(target) ?? checker.getAliasedSymbol(target);
      }
      const declarations = target.declarations ?? [];
      const kinds = [...new Set(declarations.map(declarationKind))];
      return {
        name: symbol.name,
        kind: kinds.join(' + ') || 'unknown',
        typeOnly: typeOnly || !(target.flags & ts.SymbolFlags.Value),
        deprecated: declarations.some((declaration) => ts.getJSDocDeprecatedTag(declaration) !== undefined),
      };
    });
    result.set(
      entry.specifier,
      exports.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    );
  }
  return result;
}

/** The report of one entry point, as committed under `api/`. */
export function renderReport(entry: ApiEntry, exports: readonly ApiExport[]): string {
  const internal = entry.specifier.endsWith('/internal');
  const width = Math.max(0, ...exports.map((item) => item.name.length));
  const lines = exports.map((item) => {
    const notes = [item.typeOnly ? 'type only' : 'value', ...(item.deprecated ? ['deprecated'] : [])];
    return `${item.name.padEnd(width)}  ${item.kind} (${notes.join(', ')})`;
  });
  return [
    `# API report: \`${entry.specifier}\``,
    '',
    internal
      ? 'Not public API: what the Switchboard packages share with each other (left out of the docs).'
      : 'The names this entry point exports.',
    'Generated by `pnpm api:update` from the sources; a test fails when it differs from them.',
    '',
    `${exports.length} exports.`,
    '',
    '```text',
    ...lines,
    '```',
    '',
  ].join('\n');
}

/** Every report, keyed by its file name under `api/`. */
export function currentReports(): Map<string, string> {
  const entries = apiEntries();
  const exports = readExports(entries);
  return new Map(
    entries.map((entry) => [entry.reportName, renderReport(entry, exports.get(entry.specifier)!)]),
  );
}

// `pnpm api:update`: rewrite api/ from the sources (reports of entry points that are gone are removed).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const reports = currentReports();
  for (const file of readdirSync(API_DIR, { withFileTypes: true })) {
    if (file.isFile() && file.name.endsWith('.api.md') && !reports.has(file.name))
      rmSync(`${API_DIR}${file.name}`);
  }
  for (const [name, text] of reports) writeFileSync(`${API_DIR}${name}`, text);
  console.log(`API reports written to api/ (${reports.size} entry points)`);
}
