import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage } from '../../packages/console/test/support/browser.js';

// The docs site as `pnpm docs:build` leaves it. CI builds it before the tests (.ci/run); a developer's
// run builds it here when it is missing (about a minute: TypeDoc, then VitePress).
const DOCS = fileURLToPath(new URL('../', import.meta.url));
const DIST = `${DOCS}.vitepress/dist/`;
const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };

/** What a guide's source says a reader must find: its title, its section headings, its first code line. */
function expectations(page: string) {
  const source = readFileSync(`${DOCS}guides/${page}.md`, 'utf8');
  const plain = (heading: string) => heading.replace(/`/g, '').trim();
  const outside = source.replace(/^```[\s\S]*?^```/gm, '');
  const firstCode = /^```\w*\n\s*(\S[^\n]*)/m.exec(source)?.[1];
  return {
    title: plain(/^# (.+)$/m.exec(source)![1]!),
    sections: [...outside.matchAll(/^## (.+)$/gm)].map((match) => plain(match[1]!)),
    firstCode: firstCode!.trim(),
  };
}

let server: Server;
let origin: string;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(`${DIST}index.html`)) {
    if (process.env.CI === 'true')
      throw new Error(`${DIST} is missing: CI runs 'pnpm docs:build' before the tests`);
    execFileSync('pnpm', ['docs:build'], { cwd: `${DOCS}..`, stdio: 'ignore', timeout: 240_000 });
  }
  // The built site, served as a static host would (a path's .html, nothing outside the folder).
  server = createServer((request, response) => {
    const path = normalize(decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname));
    const file = `${DIST}${path.endsWith('/') ? `${path}index.html` : path}`.replace(/\/+/g, '/');
    if (path.includes('..') || !existsSync(file)) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    response.end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchBrowser();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
});

describe('the docs site (pnpm docs:build), offline in a browser', () => {
  it.each(['strategies', 'human-approval', 'deploying'])(
    'shows the %s guide with its headings and code, asking no other host for anything',
    async (guide) => {
      const { title, sections, firstCode } = expectations(guide);
      expect(sections.length).toBeGreaterThan(0);
      const { page, blocked, errors } = await openPage(browser);
      await page.goto(`${origin}/guides/${guide}.html`);
      const content = page.locator('.vp-doc');
      await expect.poll(() => content.locator('h1').textContent()).toContain(title);
      const headings = (await content.locator('h2').allTextContents()).map((text) =>
        text.replace(/\s+/g, ' '),
      );
      for (const section of sections)
        expect(headings.some((heading) => heading.includes(section))).toBe(true);
      const code = (await content.locator('div[class*="language-"] pre code').allTextContents()).join('\n');
      expect(code).toContain(firstCode);
      // The sidebar leads to the other guides and to the generated references.
      const sidebar = page.locator('.VPSidebar');
      for (const entry of ['Writing an orchestrator', 'HTTP API', 'Error codes']) {
        await expect.poll(() => sidebar.getByRole('link', { name: entry, exact: true }).count()).toBe(1);
      }
      expect(blocked).toEqual([]);
      expect(errors).toEqual([]);
      await page.context().close();
    },
  );

  it('leads from a guide to the generated HTTP reference, and searches the pages locally', async () => {
    const { page, blocked, errors } = await openPage(browser);
    await page.goto(`${origin}/guides/deploying.html`);
    await page.locator('.VPSidebar').getByRole('link', { name: 'HTTP API', exact: true }).click();
    await expect.poll(() => page.locator('.vp-doc h1').textContent()).toContain('HTTP API');
    await expect
      .poll(() => page.locator('.vp-doc h3', { hasText: 'POST /v1/chat' }).count())
      .toBeGreaterThan(0);
    await page.locator('.VPNavBarSearch button').click();
    await page.locator('.VPLocalSearchBox input').fill('fallbackChain');
    await expect
      .poll(() => page.locator('.VPLocalSearchBox .result').first().textContent())
      .toContain('fallbackChain');
    expect(blocked).toEqual([]);
    expect(errors).toEqual([]);
    await page.context().close();
  });
});

describe('the generated references', () => {
  const built = (page: string) => readFileSync(`${DIST}reference/${page}.html`, 'utf8');

  it('list every variable the demo server reads, and a page for every entry point of the packages', async () => {
    const { EnvSchema } = await import('../../apps/server/src/config.js');
    const variables = built('configuration');
    for (const name of Object.keys(EnvSchema.shape)) expect(variables).toContain(`<code>${name}</code>`);
    const { entryPoints } = await import('../scripts/entry-points.js');
    for (const { specifier } of entryPoints())
      expect(existsSync(`${DIST}reference/typescript/${specifier}.html`)).toBe(true);
  });
});
