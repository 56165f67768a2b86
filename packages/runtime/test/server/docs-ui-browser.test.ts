import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerHandle } from '../../src/app.js';
import { buildApp, echoAgent } from '../support/app-fixtures.js';

// Debian's Chromium (`apt-get install -y chromium`); playwright-core downloads no browser of its own.
const CHROMIUM = '/usr/bin/chromium';

let browser: Browser;
let server: ServerHandle;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `The /docs browser test needs Chromium at ${CHROMIUM}: install it with 'apt-get install -y chromium'`,
    );
  }
  const { app, orchestrator } = buildApp({ name: 'docs-browser', agents: [echoAgent()], docs: true });
  server = await app.start(orchestrator, { port: 0 });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('GET /docs in a browser with the network cut off', () => {
  it('renders the API reference from files the server serves itself, and asks no other host for anything', async () => {
    const context = await browser.newContext();
    const blocked: string[] = [];
    const served: string[] = [];
    // The network is "cut off": whatever the page asks of a host other than the app is refused.
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (new URL(url).hostname === '127.0.0.1') {
        served.push(new URL(url).pathname);
        return route.continue();
      }
      blocked.push(url);
      return route.abort('internetdisconnected');
    });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
    });

    const response = await page.goto(`${server.url}/docs`);
    expect(response?.status()).toBe(200);
    // Swagger UI lists each operation with its path once it has read /openapi.json.
    const chat = page.locator('.opblock-summary-path[data-path="/v1/chat"]').first();
    await chat.waitFor({ state: 'visible', timeout: 15_000 });
    await expect(page.locator('.opblock-summary-path[data-path="/v1/sessions/{id}"]').count()).resolves.toBe(
      2,
    );

    // Opening an operation shows what it takes, from the document's schemas.
    await chat.click();
    await page.locator('.opblock-body').first().waitFor({ state: 'visible', timeout: 5_000 });
    // The body appears before its contents are rendered: polled.
    await expect.poll(() => page.locator('.opblock-body').first().textContent()).toMatch(/Request body/i);

    expect(blocked).toEqual([]);
    expect(served).toContain('/openapi.json');
    // No CSP violation, no failed script: the page works under its own Content-Security-Policy.
    expect(problems).toEqual([]);
    await context.close();
  }, 30_000);
});
