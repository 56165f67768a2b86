import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Every relative link of the READMEs and of the hand-written docs pages leads to a file of the repository,
// and every `#anchor` to a heading of its page: as GitHub names headings, and, for a page of the docs
// site, as VitePress does too (both are where the pages are read).
const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** The hand-written pages: the READMEs, docs/ and its folders, but not what `pnpm docs:build` generates. */
const pages = [
  'README.md',
  ...['docs', 'docs/concepts', 'docs/guides'].flatMap((folder) =>
    readdirSync(join(root, folder))
      .filter((file) => file.endsWith('.md') && file !== 'README.md')
      .map((file) => `${folder}/${file}`),
  ),
  'docs/reference/error-codes.md',
  // The READMEs of the packages and the examples, which lead into the docs too.
  ...['packages', 'examples'].flatMap((top) =>
    readdirSync(join(root, top))
      .filter((name) => existsSync(join(root, top, name, 'README.md')))
      .map((name) => `${top}/${name}/README.md`),
  ),
];

/** Pages that exist once `pnpm docs:build` has generated them (docs/scripts/generate.ts), git-ignored. */
const GENERATED = /^docs\/reference\/(http-api|configuration)\.md$|^docs\/reference\/typescript\//;

/** A heading's anchor as GitHub makes it. */
const githubSlug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- ]/gu, '')
    .replace(/ /g, '-');

/** A heading's anchor as VitePress makes it (@mdit-vue/shared's slugify). */
const vitepressSlug = (heading: string) =>
  heading
    .normalize('NFKD')
    .replace(/[\u0300-\u036F]/g, '')
    .replace(/[\s~`!@#$%^&*()\-_+=[\]{}|\\;:"'“”‘’<>,.?/]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-+|-+$/g, '')
    .replace(/^(\d)/, '_$1')
    .toLowerCase();

/** A markdown text without its fenced code blocks and inline code spans (links inside them are not links). */
const prose = (markdown: string) =>
  markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, '').replace(/`[^`\n]*`/g, 'code');

/** The headings of a markdown file, as plain text (inline code marks and links removed). */
function headings(markdown: string): string[] {
  return [...markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, '').matchAll(/^#{1,6} (.+?)\s*$/gm)].map((match) =>
    match[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, ''),
  );
}

/** The anchors a file offers: GitHub's (with its -1, -2 for repeats), and VitePress's for a docs page. */
function anchors(path: string): { github: Set<string>; vitepress: Set<string> } {
  const titles = headings(read(path));
  const github = new Set<string>();
  const seen = new Map<string, number>();
  for (const title of titles) {
    const slug = githubSlug(title);
    const count = seen.get(slug) ?? 0;
    github.add(count === 0 ? slug : `${slug}-${count}`);
    seen.set(slug, count + 1);
  }
  return { github, vitepress: new Set(titles.map(vitepressSlug)) };
}

interface Link {
  page: string;
  target: string;
}

/** The links of a page that lead into the repository (not to another site, not to a running server). */
function relativeLinks(page: string): Link[] {
  return [...prose(read(page)).matchAll(/\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
    .map((target) => ({ page, target }));
}

/** Why a link leads nowhere, or undefined when it leads to a file (and a heading of it). */
function problem({ page, target }: Link): string | undefined {
  const [path = '', anchor] = target.split('#');
  const file = path === '' ? page : relative(root, join(root, dirname(page), decodeURIComponent(path)));
  if (file.startsWith('..')) return `${file} is outside the repository`;
  if (!existsSync(join(root, file))) return GENERATED.test(file) ? undefined : `${file} does not exist`;
  if (anchor === undefined || !file.endsWith('.md') || statSync(join(root, file)).isDirectory())
    return undefined;
  const offered = anchors(file);
  if (!offered.github.has(anchor)) return `${file} has no heading #${anchor} (GitHub)`;
  if (file.startsWith('docs/') && !offered.vitepress.has(anchor))
    return `${file} has no heading #${anchor} on the docs site (VitePress names it otherwise)`;
  return undefined;
}

describe('the links of the READMEs and the docs pages', () => {
  const links = pages.flatMap(relativeLinks);

  it('are there to check', () => {
    expect(pages.length).toBeGreaterThan(25);
    expect(links.length).toBeGreaterThan(150);
  });

  it('each lead to a file of the repository, and an anchor to a heading of it', () => {
    const broken = links.flatMap((link) => {
      const why = problem(link);
      return why ? [`${link.page}: (${link.target}): ${why}`] : [];
    });
    expect(broken).toEqual([]);
  });

  it('tell a broken link and anchor from a good one', () => {
    expect(problem({ page: 'docs/guides/streaming.md', target: 'budgets.md' })).toBeUndefined();
    expect(problem({ page: 'docs/guides/streaming.md', target: 'budget.md' })).toContain('does not exist');
    expect(problem({ page: 'docs/guides/openai-clients.md', target: '#the-responses-api' })).toBeUndefined();
    expect(problem({ page: 'docs/guides/openai-clients.md', target: '#responses' })).toContain('no heading');
    expect(problem({ page: 'docs/index.md', target: 'reference/http-api.md' })).toBeUndefined();
  });
});
