import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { type CodeBlock, codeBlocks, DOCS, ROOT } from './code-block-pages.js';

/**
 * Every TypeScript block of the docs pages and the README type-checks against the packages' current
 * sources, so a renamed option or export shows here rather than in a reader's editor.
 *
 * Each block is a module of its own. A block that shows a part of a program (no `import` line of its own)
 * may use the names that code-block-globals.ts declares (`app`, `agents`, `client`), as the page's
 * prose introduces them; a block may declare names of its own the same way in an HTML comment just
 * above it, which the page does not show, `;`-separated, imports among them (for a block that is an
 * excerpt of a longer file): `<!-- declare: import { z } from 'zod'; const ticket: { refund: number } -->`
 * (see code-block-pages.ts). code-blocks-run.test.ts runs the blocks that are whole programs.
 */

interface CheckedBlock {
  page: string;
  /** The page line of the block's first line of code. */
  line: number;
  file: string;
  code: string;
  /** How many lines of declarations come before the block's own code. */
  prelude: number;
}

/** A block as the module the type checker sees: its declarations, then its code. */
function checked(block: CodeBlock): CheckedBlock {
  const declared = block.declarations.map((line) =>
    line.startsWith('import ') ? `${line};\n` : `declare ${line};\n`,
  );
  return {
    page: block.page,
    line: block.line,
    // Under docs/, so that the packages resolve from docs/node_modules.
    file: join(DOCS, '.code-blocks', `${block.page.replace(/[^\w]+/g, '-')}-${block.index}.ts`),
    code: `${declared.join('')}${block.code}\nexport {};\n`,
    prelude: declared.length,
  };
}

const blocks = codeBlocks().map(checked);

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
