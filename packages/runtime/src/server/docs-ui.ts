import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ConfigurationError } from '@switchboard/core';
import type { Hono } from 'hono';

/**
 * The API reference page: Swagger UI rendering `GET /openapi.json`, with
 * every script and stylesheet served by the app itself (no CDN), so that it
 * works on a machine without internet access. Needs the `swagger-ui-dist`
 * package (an optional peer dependency: `npm install swagger-ui-dist@5`).
 *
 * With `auth`, `/docs` is public by default (see `DEFAULT_PUBLIC_ROUTES`); a
 * different `path` must be added to `auth.publicRoutes` to be open as well.
 *
 * @example
 * ```ts
 * new App({ name: 'desk', agents, docs: true }); // GET /docs
 * new App({ name: 'desk', agents, docs: { path: '/reference' } });
 * ```
 */
export interface DocsOptions {
  /** Where the page is served (default `/docs`); its assets are served below it. */
  path?: string;
}

/** The files of `swagger-ui-dist` the page loads, and their content types. */
const PACKAGE_ASSETS = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'index.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
} as const;

/** A file served below the docs path. */
interface Asset {
  body: Uint8Array;
  type: string;
}

/** The Swagger UI files, read once from the installed package. */
export interface SwaggerUiFiles {
  version: string;
  assets: ReadonlyMap<string, Asset>;
}

/**
 * Everything the page may load comes from this server; styles must allow
 * inline `style` attributes, which Swagger UI's React components set.
 */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

const RESERVED_PATHS = ['/openapi.json', '/healthz', '/readyz', '/v1'];

/**
 * Reads the Swagger UI files from the installed `swagger-ui-dist`.
 * `resolve` finds a module's file (Node's own resolution by default).
 *
 * @throws ConfigurationError when the package is not installed.
 */
export function loadSwaggerUi(
  resolve: (specifier: string) => string = createRequire(import.meta.url).resolve,
): SwaggerUiFiles {
  let packageJson: string;
  try {
    packageJson = resolve('swagger-ui-dist/package.json');
  } catch (error) {
    throw new ConfigurationError({
      message:
        'docs needs the swagger-ui-dist package, which serves the API reference page: install it (npm install swagger-ui-dist@5) or turn docs off',
      cause: error,
    });
  }
  const root = dirname(packageJson);
  const { version } = JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string };
  const assets = new Map<string, Asset>();
  for (const [name, type] of Object.entries(PACKAGE_ASSETS)) {
    let body: Uint8Array = readFileSync(join(root, name));
    // The source map is not served: drop the comment pointing at it, so that dev tools do not ask for it.
    if (name.endsWith('.css'))
      body = Buffer.from(body.toString().replace(/\/\*# sourceMappingURL=[^*]*\*\/\s*$/, ''));
    assets.set(name, { body, type });
  }
  return { version, assets };
}

/** Throws a `ConfigurationError` for a docs path the server could not serve, or that hides an API route. */
export function checkDocsPath(path: string): void {
  if (!/^(?:\/[A-Za-z0-9._~-]+)+$/.test(path) || /\/\.{1,2}(?:\/|$)/.test(path)) {
    throw new ConfigurationError({
      message: `docs.path must be a path such as '/docs' (letters, digits, '.', '_', '~', '-' between slashes, no trailing slash), not '${path}'`,
    });
  }
  if (RESERVED_PATHS.some((reserved) => path === reserved || path.startsWith(`${reserved}/`))) {
    throw new ConfigurationError({ message: `docs.path '${path}' would hide an API route` });
  }
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] ?? char,
  );

/**
 * Serves the API reference page at `path` and its assets below it; returns
 * the routes it added with their methods (for the 405 answers). URLs in the
 * page are relative, so that it also works behind a proxy that adds a prefix.
 */
export function mountDocs(
  app: Hono,
  { title, files = loadSwaggerUi(), path = '/docs' }: { title: string; files?: SwaggerUiFiles } & DocsOptions,
): Record<string, readonly string[]> {
  checkDocsPath(path);
  const segments = path.split('/').slice(1);
  // From the page (`/a/docs`), assets are at `docs/…` and the document at `../openapi.json`.
  const assetBase = `${segments[segments.length - 1]}/`;
  const openApiUrl = `${'../'.repeat(segments.length - 1)}openapi.json`;
  const bust = `?v=${encodeURIComponent(files.version)}`;
  const assets = new Map(files.assets);
  assets.set('init.js', {
    type: 'text/javascript; charset=utf-8',
    // A file rather than an inline script, so that the page's CSP allows no inline script.
    body: Buffer.from(`window.ui = SwaggerUIBundle({
  url: new URL(${JSON.stringify(openApiUrl)}, window.location.href).href,
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  // The default would show a badge that sends the document to validator.swagger.io.
  validatorUrl: null,
});
`),
  });
  const page = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>${escapeHtml(title)} · API reference</title>
    <link rel="icon" type="image/png" href="${assetBase}favicon-32x32.png${bust}">
    <link rel="stylesheet" href="${assetBase}swagger-ui.css${bust}">
    <link rel="stylesheet" href="${assetBase}index.css${bust}">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${assetBase}swagger-ui-bundle.js${bust}"></script>
    <script src="${assetBase}init.js${bust}"></script>
  </body>
</html>
`;

  app.get(path, (c) => c.html(page, 200, PAGE_HEADERS));
  app.get(`${path}/:asset`, (c) => {
    const asset = assets.get(c.req.param('asset') ?? '');
    if (!asset) return c.notFound();
    // The URLs carry the package version, so a browser may keep a file for a day without asking.
    return c.body(asset.body as Uint8Array<ArrayBuffer>, 200, {
      'content-type': asset.type,
      'x-content-type-options': 'nosniff',
      'cache-control': 'public, max-age=86400',
    });
  });
  return { [path]: ['GET'], [`${path}/:asset`]: ['GET'] };
}
