import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { DefaultTheme } from 'vitepress';

const TYPESCRIPT = fileURLToPath(new URL('../reference/typescript/', import.meta.url));

/**
 * The TypeScript API's sidebar entries: one per entry point whose page
 * TypeDoc wrote (docs/reference/typescript/@switchboard/<package>[/<subpath>].md).
 */
export function typeScriptSidebar(): DefaultTheme.SidebarItem[] {
  if (!existsSync(TYPESCRIPT)) return [];
  const pages = readdirSync(TYPESCRIPT, { recursive: true, encoding: 'utf8' })
    .map((path) => path.replaceAll('\\', '/'))
    .filter((path) => path.endsWith('.md') && path !== 'index.md')
    .map((path) => path.slice(0, -'.md'.length))
    .sort();
  return [
    { text: 'Entry points', link: '/reference/typescript/' },
    ...pages.map((path) => ({ text: path, link: `/reference/typescript/${path}` })),
  ];
}
