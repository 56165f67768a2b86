import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ConfigurationError } from '@switchboard/core';
import type { Hono } from 'hono';

/**
 * The console: a page to chat with the app, follow each turn's routing
 * (decisions, agent calls, fan-out branches, errors), reopen recent
 * sessions, browse the agents and resolve pending approvals. Its files come
 * from the installed `@switchboard/console` package (an optional peer
 * dependency), built ahead of time: nothing is loaded from elsewhere, so it
 * works offline.
 *
 * The page and its files are served without a credential (they hold no
 * data); with `auth`, the console asks for an API key once and keeps it in
 * the tab's session storage.
 *
 * @example
 * ```ts
 * new App({ name: 'desk', agents, console: true }); // GET /
 * new App({ name: 'desk', agents, console: { path: '/ops', langfuseUrl: 'https://cloud.langfuse.com' } });
 * ```
 */
export interface ConsoleOptions {
  /** Where the page is served (default `/`); its files are served below `/console` (or below `path`). */
  path?: string;
  /**
   * The Langfuse instance the app's traces go to, e.g. `https://cloud.langfuse.com`: each turn with a
   * trace id then links to `<langfuseUrl>/trace/<traceId>`. Without it the trace id is shown as text.
   */
  langfuseUrl?: string;
}

/** The built console files, read once. */
export interface ConsoleFiles {
  version: string;
  /** `index.html` with its `{{…}}` placeholders. */
  page: string;
  assets: ReadonlyMap<string, { body: Uint8Array; type: string }>;
}

const ASSET_TYPES = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
} as const;

/** Everything the page loads comes from this server; it calls only this server's API. */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

const RESERVED_PATHS = ['/openapi.json', '/healthz', '/readyz', '/v1', '/docs'];

/**
 * Reads the built console from the installed `@switchboard/console`.
 * `resolve` finds a module's file (Node's own resolution by default).
 *
 * @throws ConfigurationError when the package is not installed or not built.
 */
export function loadConsole(
  resolve: (specifier: string) => string = createRequire(import.meta.url).resolve,
): ConsoleFiles {
  let packageJson: string;
  try {
    packageJson = resolve('@switchboard/console/package.json');
  } catch (error) {
    throw new ConfigurationError({
      message:
        'console needs the @switchboard/console package, which holds the console page: install it or turn the console off',
      cause: error,
    });
  }
  const dist = join(dirname(packageJson), 'dist');
  const { version } = JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string };
  try {
    const assets = new Map<string, { body: Uint8Array; type: string }>();
    for (const [name, type] of Object.entries(ASSET_TYPES))
      assets.set(name, { body: readFileSync(join(dist, name)), type });
    return { version, page: readFileSync(join(dist, 'index.html'), 'utf8'), assets };
  } catch (error) {
    throw new ConfigurationError({
      message: `the console is not built (no ${dist}): run 'pnpm --filter @switchboard/console build', or turn the console off`,
      cause: error,
    });
  }
}

/** Throws a `ConfigurationError` for a console path the server could not serve, or that hides an API route. */
export function checkConsolePath(path: string): void {
  if (path !== '/' && !/^(?:\/[A-Za-z0-9._~-]+)+$/.test(path)) {
    throw new ConfigurationError({
      message: `console.path must be '/' or a path such as '/console' (letters, digits, '.', '_', '~', '-' between slashes, no trailing slash), not '${path}'`,
    });
  }
  if (RESERVED_PATHS.some((reserved) => path === reserved || path.startsWith(`${reserved}/`))) {
    throw new ConfigurationError({ message: `console.path '${path}' would hide another route` });
  }
}

/** Throws a `ConfigurationError` for a `langfuseUrl` that is not an http(s) URL. */
function checkLangfuseUrl(url: string): void {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || !['http:', 'https:'].includes(parsed.protocol)) {
    throw new ConfigurationError({ message: `console.langfuseUrl must be an http(s) URL, not '${url}'` });
  }
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] ?? char,
  );

/**
 * Serves the console page at `path` and its files below it. Call it before
 * the auth middleware is added: the page and files hold no data and are
 * served to anyone; the API calls the page makes carry the key. Returns the
 * routes it added with their methods (for the 405 answers). URLs in the page
 * are relative, so that it also works behind a proxy that adds a prefix.
 */
export function mountConsole(
  app: Hono,
  {
    title,
    files = loadConsole(),
    path = '/',
    langfuseUrl,
  }: { title: string; files?: ConsoleFiles } & ConsoleOptions,
): Record<string, readonly string[]> {
  checkConsolePath(path);
  if (langfuseUrl !== undefined) checkLangfuseUrl(langfuseUrl);
  const segments = path === '/' ? [] : path.split('/').slice(1);
  const assetPath = path === '/' ? '/console' : path;
  // From the page (`/a/ops`), files are at `ops/…` and the API at `../v1/…`; from `/`, at `console/…` and `v1/…`.
  const assetBase = `${assetPath.split('/').pop()}/`;
  const apiBase = segments.length > 1 ? '../'.repeat(segments.length - 1).slice(0, -1) : '.';
  const bust = `?v=${encodeURIComponent(files.version)}`;
  const values: Record<string, string> = {
    title,
    apiBase,
    langfuseUrl: langfuseUrl ?? '',
    assetBase,
  };
  const page = files.page
    .replace(/\{\{(\w+)\}\}/g, (_, name: string) => escapeHtml(values[name] ?? ''))
    .replace(/(href|src)="([^"?]+\.(?:js|css))"/g, `$1="$2${bust}"`);

  app.get(path, (c) => c.html(page, 200, PAGE_HEADERS));
  app.get(`${assetPath}/:asset`, (c) => {
    const asset = files.assets.get(c.req.param('asset') ?? '');
    if (!asset) return c.notFound();
    // The URLs carry the package version, so a browser may keep a file for a day without asking.
    return c.body(asset.body as Uint8Array<ArrayBuffer>, 200, {
      'content-type': asset.type,
      'x-content-type-options': 'nosniff',
      'cache-control': 'public, max-age=86400',
    });
  });
  return { [path]: ['GET'], [`${assetPath}/:asset`]: ['GET'] };
}
