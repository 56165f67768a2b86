/**
 * The runtime serves the built console (`pnpm --filter @switchboard/console
 * build`, run by the root `pretest`): the page and its files, with their
 * types, nothing from another host, public with auth on, and only when asked.
 */

import { KeywordOrchestrator } from '@switchboard/orchestrators';
import { App, apiKeys, defineAgent } from '@switchboard/runtime';
import { describe, expect, it } from 'vitest';

const KEY = 'sk-console-test-key-0123456789';

function buildApp(options: Partial<ConstructorParameters<typeof App>[0]> = {}): App {
  const echo = defineAgent({
    name: 'echo',
    description: 'Repeats the message',
    keywords: ['echo'],
    run: (message) => `echo: ${message}`,
  });
  const app = new App({ name: 'console-test', agents: [echo], logLevel: 'silent', ...options });
  return app.mount(new KeywordOrchestrator({ agents: app.agentMetas, fallbackAgent: 'echo' }));
}

/** Every absolute http(s) URL in a text, except the W3C namespaces that bundles mention. */
const externalUrls = (text: string) =>
  [...text.matchAll(/https?:\/\/[^\s"'`)]+/g)]
    .map((match) => match[0])
    .filter((url) => !url.startsWith('http://www.w3.org/'));

describe('the console served by the runtime', () => {
  it('is off unless asked for', async () => {
    const app = buildApp();
    expect((await app.request('/')).status).toBe(404);
    expect((await app.request('/console/app.js')).status).toBe(404);
  });

  it('serves the page at / and its script and styles below /console, all from this server', async () => {
    const app = buildApp({ console: true });
    const page = await app.request('/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("connect-src 'self'");
    const html = await page.text();
    expect(html).toContain('<title>console-test · Switchboard console</title>');
    expect(html).not.toContain('{{');
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] ?? '');
    expect(sources.filter((source) => source.startsWith('console/'))).toHaveLength(2);

    const script = await app.request(sources.find((source) => source.includes('app.js'))!.replace(/^/, '/'));
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    const styles = await app.request('/console/app.css');
    expect(styles.headers.get('content-type')).toMatch(/^text\/css/);
    expect(externalUrls(html)).toEqual([]);
    expect(externalUrls(await script.text())).toEqual([]);
    expect(externalUrls(await styles.text())).toEqual([]);
    expect((await app.request('/console/nothing.js')).status).toBe(404);
  });

  it('serves the page without a key when auth is on, while the API still needs one', async () => {
    const app = buildApp({ console: true, auth: apiKeys({ keys: { [KEY]: { tenantId: 'acme' } } }) });
    expect((await app.request('/')).status).toBe(200);
    expect((await app.request('/console/app.js')).status).toBe(200);
    expect((await app.request('/v1/agents')).status).toBe(401);
    const agents = await app.request('/v1/agents', { headers: { authorization: `Bearer ${KEY}` } });
    expect(agents.status).toBe(200);
  });

  it('mounts at another path and passes the Langfuse URL to the page', async () => {
    const app = buildApp({ console: { path: '/ops/console', langfuseUrl: 'https://langfuse.example.test' } });
    expect((await app.request('/')).status).toBe(404);
    const html = await (await app.request('/ops/console')).text();
    expect(html).toContain('content="https://langfuse.example.test"');
    // From /ops/console, the API is one level up and the files are below the page.
    expect(html).toContain('name="switchboard-api" content=".."');
    expect((await app.request('/ops/console/app.js')).status).toBe(200);
  });

  it('refuses a path that would hide the API', () => {
    expect(() => buildApp({ console: { path: '/v1/console' } })).toThrow(/would hide another route/);
    expect(() => buildApp({ console: { langfuseUrl: 'javascript:alert(1)' } })).toThrow(/http\(s\) URL/);
  });
});
