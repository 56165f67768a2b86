/**
 * The console's configuration editor, in a real headless Chromium: a bad
 * item's issues shown beside the editor (nothing saved), a saved item
 * routing the next message, the version history and a rollback from it.
 */
import { KeywordOrchestrator } from '@switchboard/orchestrators';
import { App, defineAgent } from '@switchboard/runtime';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, sendMessage } from './support/browser.js';

const agent = (name: string, keywords: string[]) =>
  defineAgent({ name, description: `The ${name} agent`, keywords, run: (message) => `${name}: ${message}` });

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe('the console’s configuration editor', () => {
  it('shows a bad item’s issues inline, saves a good one that routes the next message, and rolls back', async () => {
    const app = new App({
      name: 'console-config',
      agents: [agent('echo', ['echo']), agent('clock', ['time'])],
      console: true,
      logLevel: 'silent',
    });
    const server = await app.start(
      new KeywordOrchestrator({ agents: app.agentMetas, fallbackAgent: 'echo' }),
      {
        port: 0,
      },
    );
    const { page, blocked, errors } = await openPage(browser);
    try {
      await page.goto(`${server.url}/`);
      const section = page.locator('#config-section');
      await expect.poll(() => section.isVisible()).toBe(true);
      await page.getByRole('button', { name: 'New item' }).click();
      await page.getByLabel('Type').selectOption('keywords');
      await page.getByLabel('Name').fill('clock');
      await page.getByLabel('Value (JSON)').fill('{ "keywords": [] }');
      await section.getByRole('button', { name: 'Save' }).click();
      const issues = page.locator('#config-errors');
      await expect.poll(() => issues.textContent()).toContain('keywords: Too small');
      expect(await page.getByLabel('Value (JSON)').getAttribute('aria-invalid')).toBe('true');
      expect((await app.config.list()).version).toBe(0);

      await page.getByLabel('Value (JSON)').fill('{ "keywords": ["calendar"] }');
      await page.getByLabel('Comment').fill('dates too');
      await section.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => page.locator('#config-items').textContent()).toContain('keywords/clock · v1');
      expect(await issues.isVisible()).toBe(false);
      await sendMessage(page, 'my calendar');
      const answers = page.locator('#messages .message.assistant .content');
      await expect.poll(() => answers.allTextContents()).toEqual(['clock: my calendar']);

      await page.getByLabel('Value (JSON)').fill('{ "keywords": ["agenda"] }');
      await section.getByRole('button', { name: 'Save' }).click();
      const history = page.locator('#config-history');
      await expect.poll(() => history.locator('li').count()).toBe(2);
      expect(await history.textContent()).toContain('dates too');
      await page.getByRole('button', { name: 'Roll back to v1' }).click();
      await expect.poll(() => page.locator('#config-items').textContent()).toContain('keywords/clock · v3');
      expect((await app.config.get('keywords', 'clock')).value).toEqual({ keywords: ['calendar'] });
      expect(blocked).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await server.close();
    }
  });
});
