/**
 * Takes the README screenshot of the console: starts the demo server
 * (apps/server, keyword routing, offline agents) in this process on a free
 * port, opens the console in headless Chromium at 1280×800 (light theme),
 * sends two messages, waits for the routing timeline, queues a third as a
 * background turn (shown finished in the open Background panel) and writes
 * docs/console.png. Run with tsx (it imports the server's TypeScript):
 * `pnpm screenshot:console`, which builds the console first.
 * Chromium: /usr/bin/chromium, or CHROMIUM_PATH.
 */
import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { buildServerApp } from '../../../apps/server/src/build-app.ts';
import { readConfig } from '../../../apps/server/src/config.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const output = join(root, 'docs/console.png');
const MESSAGES = ['what is 15% of 80?', 'time in Tokyo'];
const BACKGROUND = 'what is 2 + 2?';

/** Logs nothing: the screenshot is the only output. */
const silent = { error() {}, warn() {}, info() {}, debug() {}, child: () => silent };
const server = buildServerApp(readConfig({}), { logger: silent });
const handle = await server.app.start(server.orchestrator, { port: 0, host: '127.0.0.1' });
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
try {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 800 },
    colorScheme: 'light',
    deviceScaleFactor: 1,
  });
  const page = await context.newPage();
  await page.goto(`${handle.url}/`);
  await page.locator('#agents li').first().waitFor();
  for (const [index, text] of MESSAGES.entries()) {
    const box = page.getByLabel('Message', { exact: true });
    await box.fill(text);
    await box.press('Enter');
    // The reply is in and the stored turn has replaced the live one.
    await page.locator('#messages .message.assistant').nth(index).waitFor();
    await page
      .locator('#turns .turn')
      .nth(index)
      .locator('.badge', { hasText: 'completed' })
      .first()
      .waitFor();
    await page.locator('#send:not([disabled])').waitFor();
  }
  await page.locator('#status', { hasText: 'Reply received.' }).waitFor();
  // A background turn, finished, in the open Background panel.
  await page.getByLabel('In background').check();
  const box = page.getByLabel('Message', { exact: true });
  await box.fill(BACKGROUND);
  await box.press('Enter');
  await page.locator('#background-turns .bg-turn[data-status="completed"]').waitFor();
  // Its answer shows in the chat once it ended.
  await page.locator('#messages .message.assistant').nth(MESSAGES.length).waitFor();
  await page.locator('#messages').evaluate((list) => {
    list.scrollTop = list.scrollHeight;
  });
  await page.getByLabel('In background').uncheck();
  await page.screenshot({ path: output });
  const { size } = await stat(output);
  console.log(`wrote ${output} (${Math.round(size / 1024)} KB)`);
} finally {
  await browser.close();
  await handle.close();
}
