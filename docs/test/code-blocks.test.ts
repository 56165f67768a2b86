import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Every TypeScript block of the docs pages and the README type-checks against the packages' current
 * sources, so a renamed option or export shows here rather than in a reader's editor.
 *
 * Each block is a module of its own. A block that shows a part of a program (no `import` line of its own)
 * may use the names that code-block-globals.ts declares (`app`, `agents`, `client`), as the page's
 * prose introduces them; a block may declare names of its own the same way in an HTML comment just
 * above it, which the page does not show, `;`-separated, imports among them (for a block that is an
 * excerpt of a longer file): `<!-- declare: import { z } from 'zod'; const ticket: { refund: number } -->`.
 */

const DOCS = fileURLToPath(new URL('../', import.meta.url));
const ROOT = join(DOCS, '..');
const SKIP_DIRS = new Set(['node_modules', '.vitepress', 'reference', 'test']);

/** The Markdown pages whose blocks are checked: docs/ (the generated references aside) and the README. */
function pages(dir = DOCS): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) found.push(...pages(join(dir, entry.name)));
    } else if (entry.name.endsWith('.md')) found.push(join(dir, entry.name));
  }
  return dir === DOCS ? [...found.sort(), join(ROOT, 'README.md')] : found;
}

interface Block {
  page: string;
  /** The page line of the block's first line of code. */
  line: number;
  file: string;
  code: string;
  /** How many lines of declarations come before the block's own code. */
  prelude: number;
}

const FENCE = /^```(?:ts|typescript)\b[^\n]*\n([\s\S]*?)^```/gm;
/** A declare comment that ends right above a fence (and holds no other comment's end). */
const DECLARE = /<!--\s*declare:((?:(?!-->)[\s\S])*)-->\s*$/;

/** The declarations of a declare comment, one a line: split at each `;` outside brackets. */
function declarations(text: string): string[] {
  const found: string[] = [];
  let depth = 0;
  let start = 0;
  for (let at = 0; at < text.length; at++) {
    const char = text[at]!;
    if ('{([<'.includes(char)) depth++;
    else if ('})]>'.includes(char) && text[at - 1] !== '=') depth--;
    else if (char === ';' && depth === 0) {
      found.push(text.slice(start, at));
      start = at + 1;
    }
  }
  found.push(text.slice(start));
  return found.map((part) => part.replace(/\s+/g, ' ').trim()).filter(Boolean);
}

function blocksOf(page: string): Block[] {
  const text = readFileSync(page, 'utf8');
  const name = relative(ROOT, page).replace(/[^\w]+/g, '-');
  return [...text.matchAll(FENCE)].map((match, index) => {
    const before = text.slice(0, match.index);
    const declared = declarations(DECLARE.exec(before)?.[1] ?? '').map((line) =>
      line.startsWith('import ') ? `${line};\n` : `declare ${line};\n`,
    );
    return {
      page: relative(ROOT, page),
      line: before.split('\n').length + 1,
      // Under docs/, so that the packages resolve from docs/node_modules.
      file: join(DOCS, '.code-blocks', `${name}-${index + 1}.ts`),
      code: `${declared.join('')}${match[1]}\nexport {};\n`,
      prelude: declared.length,
    };
  });
}

const blocks = pages().flatMap(blocksOf);

describe('the TypeScript blocks of the docs and the README', () => {
  it('type-check against the packages', () => {
    expect(blocks.length).toBeGreaterThan(40);
    const virtual = new Map(blocks.map((block) => [block.file, block]));
    const globals = fileURLToPath(new URL('code-block-globals.ts', import.meta.url));
    const options: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2023.d.ts'],
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ['node'],
      typeRoots: [join(ROOT, 'node_modules', '@types')],
      noUnusedLocals: false,
    };
    const host = ts.createCompilerHost(options);
    const readFile = host.readFile.bind(host);
    const fileExists = host.fileExists.bind(host);
    host.readFile = (file) => virtual.get(file)?.code ?? readFile(file);
    host.fileExists = (file) => virtual.has(file) || fileExists(file);
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (file, language, ...rest) => {
      const block = virtual.get(file);
      return block
        ? ts.createSourceFile(file, block.code, language, true)
        : getSourceFile(file, language, ...rest);
    };
    const program = ts.createProgram([...virtual.keys(), globals], options, host);
    // The globals file is left out of the repository's own type-check (its names are for the blocks only): checked here.
    const problems = [...program.getSemanticDiagnostics(program.getSourceFile(globals))].map(
      (diagnostic) =>
        `${relative(ROOT, globals)}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`,
    );
    for (const block of blocks) {
      const source = program.getSourceFile(block.file);
      const diagnostics = [
        ...program.getSyntacticDiagnostics(source),
        ...program.getSemanticDiagnostics(source),
      ];
      for (const diagnostic of diagnostics) {
        const at =
          diagnostic.start === undefined ? 0 : source!.getLineAndCharacterOfPosition(diagnostic.start).line;
        // A problem in the declarations points at the comment, the line above the fence.
        const line = at < block.prelude ? block.line - 2 : block.line + at - block.prelude;
        problems.push(
          `${block.page}:${line}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`,
        );
      }
    }
    expect(problems).toEqual([]);
  }, 120_000);
});
