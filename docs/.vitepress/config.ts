/**
 * The docs site: the pages of docs/ and the references that `pnpm docs:build`
 * generates into docs/reference/ (see docs/scripts/generate.ts). It builds and
 * reads offline: no web fonts, no analytics, local search.
 */
import { posix } from 'node:path';
import { defineConfig, type MarkdownRenderer } from 'vitepress';
import { typeScriptSidebar } from './typescript-sidebar';

/**
 * Links from a page to a file of the repository outside docs/ (`../../examples/approvals`,
 * `../../README.md#logs`) read well on the repository's pages but lead nowhere on the site:
 * the site shows them as the repository path they name, not as a broken link.
 */
function repositoryPaths(md: MarkdownRenderer): void {
  md.core.ruler.push('repository-paths', (state) => {
    const page = String((state.env as { relativePath?: string }).relativePath ?? '');
    for (const block of state.tokens) {
      const children = block.children ?? [];
      for (let index = 0; index < children.length; index++) {
        const token = children[index]!;
        if (token.type !== 'link_open') continue;
        const href = token.attrGet('href') ?? '';
        if (/^[a-z]+:|^#|^\//i.test(href)) continue;
        const target = posix.normalize(posix.join(posix.dirname(page), href.replace(/#.*$/, '')));
        if (!target.startsWith('../')) continue;
        const path = target.replace(/^(\.\.\/)+/, '');
        token.type = 'html_inline';
        token.content = `<span class="repository-path" title="${md.utils.escapeHtml(`in the repository: ${path}`)}">`;
        let depth = 1;
        for (let close = index + 1; close < children.length; close++) {
          const inner = children[close]!;
          if (inner.type === 'link_open') depth++;
          if (inner.type === 'link_close' && --depth === 0) {
            inner.type = 'html_inline';
            inner.content = '</span>';
            break;
          }
        }
      }
    }
  });
}

/** The guides, in the sidebar's order: [title, page under guides/]. */
const GUIDES: readonly (readonly [string, string])[] = [
  ['Writing an orchestrator', 'writing-an-orchestrator'],
  ['Agents: MCP, A2A, LangGraph', 'agents'],
  ['Built-in routers', 'routers'],
  ['Multi-agent patterns', 'patterns'],
  ['Graphs', 'graphs'],
  ['Human approval', 'human-approval'],
  ['Rails and guardrails', 'rails'],
  ['Strategies', 'strategies'],
  ['Retrieval', 'retrieval'],
  ['Streaming', 'streaming'],
  ['Background turns', 'background-turns'],
  ['Callbacks', 'callbacks'],
  ['OpenAI clients', 'openai-clients'],
  ['HTTP API at a glance', 'http-api'],
  ['Tracing with Langfuse', 'tracing-langfuse'],
  ['Metrics and logs', 'metrics-and-logs'],
  ['Several replicas on Redis', 'redis-replicas'],
  ['Security', 'security'],
  ['API keys and limits', 'api-keys'],
  ['Evals', 'evals'],
  ['Live configuration', 'configuration'],
  ['Budgets', 'budgets'],
  ['Testing your orchestrator', 'testing'],
  ['Deploying', 'deploying'],
  ['Troubleshooting', 'troubleshooting'],
];

export default defineConfig({
  title: 'Switchboard',
  description:
    'Pluggable multi-agent orchestration for TypeScript: write an orchestrator, host it, trace it.',
  lang: 'en',
  cleanUrls: false,
  lastUpdated: false,
  srcExclude: ['scripts/**', 'test/**', 'README.md'],
  outDir: '.vitepress/dist',
  cacheDir: '.vitepress/cache',
  // The TypeScript reference's pages are large chunks by nature; each loads only when it is opened.
  vite: { build: { chunkSizeWarningLimit: 1_500 } },
  markdown: { config: repositoryPaths },
  // The quick start's links to a running server (localhost:3000) are checked by the server's own tests.
  ignoreDeadLinks: 'localhostLinks',
  themeConfig: {
    search: {
      provider: 'local',
      options: {
        // The TypeScript reference is indexed by its headings (each export, each member): its whole text
        // would make the search index, which a reader downloads on opening the search, ten times larger.
        _render(source, env, md) {
          const html = md.render(source, env);
          if (!env.relativePath.startsWith('reference/typescript/')) return html;
          const headings = source.split('\n').filter((line) => /^#{1,4} /.test(line));
          return md.render(headings.join('\n\n'), env);
        },
      },
    },
    outline: [2, 3],
    nav: [
      { text: 'Quick start', link: '/quickstart' },
      { text: 'Guides', link: '/guides/writing-an-orchestrator' },
      { text: 'Reference', link: '/reference/http-api' },
    ],
    sidebar: [
      { text: 'Quick start', link: '/quickstart' },
      {
        text: 'Concepts',
        items: [
          { text: 'The protocol', link: '/concepts/protocol' },
          { text: "A turn's life", link: '/concepts/turn-life' },
          { text: 'Sessions and memory', link: '/concepts/sessions-and-memory' },
        ],
      },
      { text: 'Guides', items: GUIDES.map(([text, page]) => ({ text, link: `/guides/${page}` })) },
      {
        text: 'Reference',
        items: [
          { text: 'HTTP API', link: '/reference/http-api' },
          { text: 'Configuration variables', link: '/reference/configuration' },
          { text: 'Error codes', link: '/reference/error-codes' },
          { text: 'TypeScript API', collapsed: true, items: typeScriptSidebar() },
        ],
      },
      { text: 'Examples', link: '/examples' },
      { text: 'Performance', link: '/performance' },
    ],
  },
});
