/**
 * Shared by the console's browser tests: a headless Chromium (Debian's
 * `chromium`, or CHROMIUM_PATH) and pages that may reach this machine only.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

/** The Chromium the tests drive. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Launches headless Chromium; fails (never skips) with how to install it when it is missing. */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `These tests drive the console in a headless Chromium, but ${CHROMIUM} does not exist. ` +
        `Install Debian's chromium (apt-get install -y --no-install-recommends chromium) or set CHROMIUM_PATH.`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
    ],
  });
}

/** A page that may reach 127.0.0.1 only; `blocked` lists what it tried elsewhere, `errors` its script errors. */
export async function openPage(
  browser: Browser,
): Promise<{ page: Page; blocked: string[]; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const blocked: string[] = [];
  const errors: string[] = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.hostname === '127.0.0.1') return route.continue();
    blocked.push(url.href);
    return route.abort();
  });
  const page = await context.newPage();
  page.on('pageerror', (error) => errors.push(error.message));
  return { page, blocked, errors };
}

/** Types a message and sends it with Enter, as a keyboard user would. */
export async function sendMessage(page: Page, text: string): Promise<void> {
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByLabel('Message', { exact: true }).press('Enter');
}
