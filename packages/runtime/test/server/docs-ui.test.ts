import { ConfigurationError } from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { App, AppOptions } from '../../src/app.js';
import { apiKeys } from '../../src/server/auth.js';
import { loadSwaggerUi } from '../../src/server/docs-ui.js';
import { buildApp, createApp, echoAgent } from '../support/app-fixtures.js';

const KEY = 'sk-docs-0123456789abcdef0123456789';

let apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.map((app) => app.close()));
  apps = [];
});

function open(options: Partial<AppOptions> = {}) {
  const { app } = createApp({ agents: [echoAgent()], ...options });
  apps.push(app);
  return app;
}

/** The URLs of the page's scripts, stylesheets and icons, as a browser resolves them against `pageUrl`. */
function loadedUrls(html: string, pageUrl: URL): { kind: 'script' | 'stylesheet' | 'icon'; url: URL }[] {
  const found: { kind: 'script' | 'stylesheet' | 'icon'; url: URL }[] = [];
  for (const match of html.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/g))
    found.push({ kind: 'script', url: new URL(match[1]!, pageUrl) });
  for (const match of html.matchAll(/<link\b[^>]*\brel="(stylesheet|icon)"[^>]*\bhref="([^"]+)"/g))
    found.push({ kind: match[1] as 'stylesheet' | 'icon', url: new URL(match[2]!, pageUrl) });
  return found;
}

const CONTENT_TYPES = { script: /^text\/javascript/, stylesheet: /^text\/css/, icon: /^image\/png/ };

/** Absolute http(s) URLs in `text`, but for XML namespaces (`http://www.w3.org/2000/svg`), which nothing fetches. */
const absoluteUrls = (text: string) =>
  [...text.matchAll(/https?:\/\/[^\s"'`)<>]+/g)]
    .map((match) => match[0])
    .filter((url) => !url.startsWith('http://www.w3.org/'));

/** Fetches the page at `path` and every file it loads; returns the page, the files' bodies by URL, and the loader script. */
async function loadPage(app: App, path: string) {
  const pageUrl = new URL(path, 'http://localhost');
  const page = await app.request(path);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  const html = await page.text();
  const urls = loadedUrls(html, pageUrl);
  const bodies = new Map<string, string>();
  for (const { kind, url } of urls) {
    // Served by the app itself: same origin, and the app answers it.
    expect(url.origin).toBe(pageUrl.origin);
    const answer = await app.request(url.pathname + url.search);
    expect(answer.status, url.pathname).toBe(200);
    expect(answer.headers.get('content-type'), url.pathname).toMatch(CONTENT_TYPES[kind]);
    const body = await answer.text();
    expect(body.length, url.pathname).toBeGreaterThan(0);
    bodies.set(url.pathname, body);
  }
  const loader = [...bodies].find(([pathname]) => pathname.endsWith('/init.js'))?.[1];
  return { page, html, urls, bodies, loader: loader ?? '', pageUrl };
}

describe('the API reference page (docs)', () => {
  it('is off by default', async () => {
    const app = open();
    expect((await app.request('/docs')).status).toBe(404);
    expect((await app.request('/docs/swagger-ui-bundle.js')).status).toBe(404);
  });

  it('serves /docs with every script and stylesheet from the app itself, and no URL of another host', async () => {
    const app = open({ docs: true, name: 'Support <desk>' });
    const { page, html, urls, bodies, loader } = await loadPage(app, '/docs');

    expect(urls.filter((entry) => entry.kind === 'script')).toHaveLength(2);
    expect(urls.filter((entry) => entry.kind === 'stylesheet').length).toBeGreaterThanOrEqual(1);
    expect(urls.map((entry) => entry.url.pathname)).toEqual(
      expect.arrayContaining(['/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css', '/docs/init.js']),
    );
    // The app's name is the title, escaped.
    expect(html).toContain('<title>Support &lt;desk&gt; · API reference</title>');
    // Neither the page, nor the script that starts Swagger UI, nor the stylesheets name another host.
    expect(absoluteUrls(html)).toEqual([]);
    expect(absoluteUrls(loader)).toEqual([]);
    for (const [pathname, body] of bodies)
      if (pathname.endsWith('.css')) expect(absoluteUrls(body)).toEqual([]);
    // The validator badge would send the document to validator.swagger.io; it is off.
    expect(loader).toMatch(/validatorUrl:\s*null/);
    // The bundle itself holds URL strings (JSON Schema dialect ids, RFC links in messages) that it does
    // not fetch; docs-ui-browser.test.ts shows a browser asks no other host for anything.

    // Only same-origin scripts, no inline script; the page cannot be framed.
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  });

  it('points at /openapi.json, which describes the API', async () => {
    const app = open({ docs: true });
    const { loader, pageUrl } = await loadPage(app, '/docs');
    const relative = /new URL\("([^"]+)", window\.location\.href\)/.exec(loader)?.[1];
    expect(relative).toBeDefined();
    const documentUrl = new URL(relative!, pageUrl);
    expect(documentUrl.pathname).toBe('/openapi.json');
    const document = (await (await app.request(documentUrl.pathname)).json()) as {
      paths: Record<string, unknown>;
    };
    expect(Object.keys(document.paths)).toContain('/v1/chat');
  });

  it('serves the page at another path, its document link still resolving to /openapi.json', async () => {
    const app = open({ docs: { path: '/api/reference' } });
    const { urls, loader, pageUrl } = await loadPage(app, '/api/reference');
    for (const { url } of urls) expect(url.pathname.startsWith('/api/reference/')).toBe(true);
    const relative = /new URL\("([^"]+)", window\.location\.href\)/.exec(loader)?.[1];
    expect(new URL(relative!, pageUrl).pathname).toBe('/openapi.json');
    expect((await app.request('/docs')).status).toBe(404);
  });

  it('is public like /openapi.json when the API needs a key', async () => {
    const app = open({ docs: true, auth: apiKeys({ keys: { [KEY]: { tenantId: 'acme' } } }) });
    const { urls } = await loadPage(app, '/docs');
    expect(urls.length).toBeGreaterThan(0);
    expect((await app.request('/openapi.json')).status).toBe(200);
    expect((await app.request('/v1/agents')).status).toBe(401);
  });

  it('answers 404 for a file it does not have and 405 for another method', async () => {
    const app = open({ docs: true });
    expect((await app.request('/docs/swagger-initializer.js')).status).toBe(404);
    expect((await app.request('/docs/..%2Fpackage.json')).status).toBe(404);
    const post = await app.request('/docs', { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
  });

  it('refuses a path it could not serve, or one that hides an API route, when the app is mounted', () => {
    for (const path of ['docs', '/docs/', '/', '/v1/docs', '/openapi.json', '/docs/:page', '/a/../docs']) {
      const { app, orchestrator } = buildApp({ agents: [echoAgent()], docs: { path } });
      apps.push(app);
      expect(() => app.mount(orchestrator), path).toThrow(ConfigurationError);
    }
  });

  it('says which package to install when swagger-ui-dist is missing', () => {
    const missing = () => {
      throw Object.assign(new Error("Cannot find module 'swagger-ui-dist/package.json'"), {
        code: 'MODULE_NOT_FOUND',
      });
    };
    expect(() => loadSwaggerUi(missing)).toThrow(ConfigurationError);
    expect(() => loadSwaggerUi(missing)).toThrow(/npm install swagger-ui-dist@5/);
  });
});
