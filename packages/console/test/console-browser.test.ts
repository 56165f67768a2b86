/**
 * Drives the console in a real headless Chromium (Debian's `chromium`, which
 * `.ci/run` installs when it can), the way a person would: send a message,
 * watch the reply stream in, read the routing timeline, come back later and
 * reopen the session from the list. Once with the in-memory stores and no
 * auth, once with auth on and the Redis stores. Screenshots go to
 * `test-output/` (ignored by git). Every request to another host is refused.
 */
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KeywordOrchestrator } from '@switchboard/orchestrators';
import {
  type Agent,
  App,
  type AppOptions,
  apiKeys,
  defineAgent,
  type ServerHandle,
} from '@switchboard/runtime';
import { createRedisStores } from '@switchboard/runtime/redis';
import { Redis } from 'ioredis';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, sendMessage } from './support/browser.js';

const OUTPUT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../test-output');
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const KEY = 'sk-console-browser-test-0123456789';

/** Streams `Hel`, waits until the test lets it go on, then streams the rest. */
function gatedStreamer(): Agent & { release(): void } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const agent = defineAgent({
    name: 'streamer',
    description: 'Tells a story, a few words at a time',
    keywords: ['story'],
    async *run() {
      yield 'Hel';
      await gate;
      yield 'lo from ';
      yield 'the streamer';
    },
  });
  return Object.assign(agent, { release });
}

const echo = defineAgent({
  name: 'echo',
  description: 'Repeats the message',
  keywords: ['echo'],
  run: (message) => `echo: ${message}`,
});

async function startApp(agents: Agent[], options: Partial<AppOptions> = {}): Promise<ServerHandle> {
  const app = new App({ name: 'console-e2e', agents, console: true, logLevel: 'silent', ...options });
  return app.start(new KeywordOrchestrator({ agents: app.agentMetas, fallbackAgent: 'echo' }), { port: 0 });
}

let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
  await mkdir(OUTPUT, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
});

describe('the console in a browser', () => {
  it('streams a reply, shows the routing, and reopens the session from the list after a reload', async () => {
    const streamer = gatedStreamer();
    const server = await startApp([echo, streamer]);
    const { page, blocked, errors } = await openPage(browser);
    try {
      await page.goto(`${server.url}/`);
      await expect
        .poll(() => page.locator('#agents li').allTextContents())
        .toEqual([expect.stringContaining('echo'), expect.stringContaining('streamer')]);
      await expect.poll(() => page.locator('#agents').textContent()).toContain('Keywords: story');

      await sendMessage(page, 'tell me a story');
      // The first words are on screen while the agent is still writing.
      const streaming = page.locator('#messages .message.agent.streaming .content');
      await expect.poll(() => streaming.textContent()).toBe('Hel');
      streamer.release();
      const answer = page.locator('#messages .message.assistant .content');
      await expect.poll(() => answer.allTextContents()).toEqual(['Hello from the streamer']);

      const call = page.locator('#turns .turn .call[data-agent="streamer"]');
      await expect.poll(() => call.count()).toBe(1);
      expect(await call.textContent()).toContain('Reason: matched keywords: story');
      expect(await call.textContent()).toContain('ok');
      expect(await page.locator('#turns .turn .badge').first().textContent()).toBe('completed');
      const sessionId = ((await page.locator('#session-label').textContent()) ?? '').replace(/^·\s*/, '');
      expect(sessionId).toMatch(/^ses/);
      await page.screenshot({ path: join(OUTPUT, 'console-chat.png'), fullPage: true });

      // Come back to the console: a new session, with the earlier one in the list.
      await page.goto(`${server.url}/`);
      await expect.poll(() => page.locator('#session-label').textContent()).toBe('· new session');
      expect(await page.locator('#messages li').count()).toBe(0);
      const entry = page.locator(`#sessions button[data-session-id="${sessionId}"]`);
      await expect.poll(() => entry.count()).toBe(1);
      expect(await entry.textContent()).toContain('tell me a story');
      await entry.focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => answer.allTextContents()).toEqual(['Hello from the streamer']);
      await expect.poll(() => call.textContent()).toContain('Reason: matched keywords: story');
      // The list marks the session once the replay has rendered: polled, as the rest of the page.
      await expect.poll(() => entry.getAttribute('aria-current')).toBe('true');
      await page.screenshot({ path: join(OUTPUT, 'console-replay.png'), fullPage: true });

      expect(blocked).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await server.close();
    }
  });

  it('asks for the API key once per tab and works against the Redis stores', async () => {
    const prefix = `sbtest:console:${Date.now().toString(36)}:`;
    const admin = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await admin.connect();
    const server = await startApp([echo], {
      ...createRedisStores(REDIS_URL, { keyPrefix: prefix }),
      auth: apiKeys({ keys: { [KEY]: { tenantId: 'acme', name: 'console' } } }),
    });
    const { page, blocked, errors } = await openPage(browser);
    try {
      await page.goto(`${server.url}/`);
      const keyField = page.getByLabel('API key');
      await expect.poll(() => keyField.isVisible()).toBe(true);
      expect(await page.locator('#status').textContent()).toContain('needs an API key');
      await keyField.fill(KEY);
      await keyField.press('Enter');
      await expect.poll(() => page.locator('#agents').textContent()).toContain('Repeats the message');

      await sendMessage(page, 'echo hello');
      const answer = page.locator('#messages .message.assistant .content');
      await expect.poll(() => answer.allTextContents()).toEqual(['echo: echo hello']);
      const call = page.locator('#turns .call[data-agent="echo"]');
      await expect.poll(() => call.textContent()).toContain('Reason: matched keywords: echo');
      const sessionId = ((await page.locator('#session-label').textContent()) ?? '').replace(/^·\s*/, '');
      expect(await admin.keys(`${prefix}*`)).not.toEqual([]);

      // The key is kept for the tab: no second prompt after coming back.
      await page.goto(`${server.url}/`);
      await expect.poll(() => page.locator('#agents').textContent()).toContain('Repeats the message');
      expect(await keyField.isVisible()).toBe(false);
      await page.locator(`#sessions button[data-session-id="${sessionId}"]`).click();
      await expect.poll(() => answer.allTextContents()).toEqual(['echo: echo hello']);
      await page.screenshot({ path: join(OUTPUT, 'console-auth-redis.png'), fullPage: true });

      expect(blocked).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await server.close();
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length > 0) await admin.del(...keys);
      admin.disconnect();
    }
  });
});
