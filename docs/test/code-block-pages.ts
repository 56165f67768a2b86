import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The TypeScript blocks of the docs pages and the README, with what the page says about each in HTML
 * comments just above its fence (the page does not show them), for the tests that type-check and run them:
 *
 * - `<!-- declare: const ticket: { refund: number }; import { z } from 'zod' -->`: names the block uses
 *   without defining them, `;`-separated (for a block that is an excerpt of a longer program).
 * - `<!-- run -->`, `<!-- run: model -->`, `<!-- run: redis -->`: the block is a complete program, run as
 *   written, offline, against an OpenAI-compatible model (`OPENAI_BASE_URL`), or on Redis (`REDIS_URL`, its
 *   key prefix from `REDIS_KEY_PREFIX`).
 * - `<!-- no-run: why -->`: a block with imports of its own that does not run, and why.
 *
 * Several comments may be stacked above one fence, in any order.
 */

/** The docs package's directory. */
export const DOCS = fileURLToPath(new URL('../', import.meta.url));
/** The repository's root. */
export const ROOT = join(DOCS, '..');
const SKIP_DIRS = new Set(['node_modules', '.vitepress', 'reference', 'test']);

/** What a block needs to run: nothing but Node, a model (`OPENAI_BASE_URL`), or Redis (`REDIS_URL`). */
export type RunNeed = 'offline' | 'model' | 'redis';

/** One TypeScript block of a page. */
export interface CodeBlock {
  /** The page, relative to the repository's root. */
  page: string;
  /** The page line of the block's first line of code. */
  line: number;
  /** The block's place among the page's TypeScript blocks, from 1. */
  index: number;
  /** The code as the page shows it. */
  code: string;
  /** The declarations of its `declare:` comment, one an entry. */
  declarations: string[];
  /** Whether it has `import` lines of its own (a complete program, unless it declares names). */
  hasImports: boolean;
  /** What it needs to run, when it is marked `run`. */
  run?: RunNeed;
  /** Why it does not run, when it is marked `no-run`. */
  noRun?: string;
  /** What the page shows it printing: `// → …` after a `console.log`, and a `text` block that follows it. */
  output: string[];
  /** What is wrong with its comments (an unknown need, two markers), for the tests to report. */
  problems: string[];
}

/** The Markdown pages whose blocks are checked: docs/ (the generated references aside) and the README. */
export function pages(dir = DOCS): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name) && !entry.name.startsWith('.'))
        found.push(...pages(join(dir, entry.name)));
    } else if (entry.name.endsWith('.md')) found.push(join(dir, entry.name));
  }
  return dir === DOCS ? [...found.sort(), join(ROOT, 'README.md')] : found;
}

const FENCE = /^```(?:ts|typescript)\b[^\n]*\n([\s\S]*?)^```/gm;
/** The next fenced block after a block: its language and its text. */
const NEXT_FENCE = /^```(\w*)[^\n]*\n([\s\S]*?)^```/m;
/** A printing line that shows what it prints: `console.log(total); // → 42`. */
const SHOWN_OUTPUT = /(?:console\.log|process\.stdout\.write)\(.*\/\/ → (.+)$/;
const RUN_NEEDS: Record<string, RunNeed> = { '': 'offline', model: 'model', redis: 'redis' };

/** The HTML comments stacked right above a fence (only whitespace between them), top first. */
function commentsAbove(before: string): string[] {
  const found: string[] = [];
  let rest = before.trimEnd();
  while (rest.endsWith('-->')) {
    const start = rest.lastIndexOf('<!--');
    if (start < 0) break;
    found.unshift(rest.slice(start + '<!--'.length, -'-->'.length).trim());
    rest = rest.slice(0, start).trimEnd();
  }
  return found;
}

/** The declarations of a declare comment, one a line: split at each `;` outside brackets. */
function declarationsOf(text: string): string[] {
  const found: string[] = [];
  let depth = 0;
  let start = 0;
  for (let at = 0; at < text.length; at++) {
    const char = text[at] as string;
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

/** What the page shows a block printing: its `// → …` comments, and a `text` block after it before the next heading. */
function outputOf(code: string, after: string): string[] {
  const shown = code.split('\n').flatMap((line) => {
    const match = SHOWN_OUTPUT.exec(line);
    return match ? [(match[1] as string).trim()] : [];
  });
  const next = NEXT_FENCE.exec(after);
  if (next?.[1] === 'text' && !/^#/m.test(after.slice(0, next.index)))
    shown.push((next[2] as string).trimEnd());
  return shown;
}

/** The TypeScript blocks of one page. */
export function blocksOf(page: string): CodeBlock[] {
  const text = readFileSync(page, 'utf8');
  const name = relative(ROOT, page);
  return [...text.matchAll(FENCE)].map((match, index) => {
    const before = text.slice(0, match.index);
    const code = match[1] as string;
    const line = before.split('\n').length + 1;
    const block: CodeBlock = {
      page: name,
      line,
      index: index + 1,
      code,
      declarations: [],
      hasImports: /^import\s/m.test(code),
      output: outputOf(code, text.slice(match.index + match[0].length)),
      problems: [],
    };
    const problem = (message: string) => block.problems.push(`${name}:${line}: ${message}`);
    for (const comment of commentsAbove(before)) {
      const [, keyword = '', rest = ''] = /^([\w-]+)\s*(?::([\s\S]*))?$/.exec(comment) ?? [];
      if (keyword === 'declare') block.declarations.push(...declarationsOf(rest));
      else if (keyword === 'run' || keyword === 'no-run') {
        if (block.run !== undefined || block.noRun !== undefined)
          problem('more than one run or no-run comment');
        if (keyword === 'no-run') {
          block.noRun = rest.trim();
          if (block.noRun === '') problem('`no-run` needs a reason: <!-- no-run: why it does not run -->');
        } else {
          block.run = RUN_NEEDS[rest.trim()];
          if (block.run === undefined)
            problem(
              `unknown run need '${rest.trim()}': <!-- run -->, <!-- run: model --> or <!-- run: redis -->`,
            );
        }
      }
    }
    return block;
  });
}

/** Every TypeScript block of the docs pages and the README, in page order. */
export function codeBlocks(): CodeBlock[] {
  return pages().flatMap(blocksOf);
}
