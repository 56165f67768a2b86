/**
 * The console's less travelled paths, in a real headless Chromium: approving
 * and rejecting a paused call, fan-out calls side by side, the Langfuse link
 * of a traced turn, and a failed call shown as failed. Every request to
 * another host is refused.
 */
import {
  AbstractOrchestrator,
  type Conversation,
  currentUserMessage,
  latestToolResults,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import { KeywordOrchestrator, withBreaker, withSteps } from '@switchboard/orchestrators';
import { type Agent, App, type AppOptions, defineAgent, type ServerHandle } from '@switchboard/runtime';
import { recordSpans } from '@switchboard/runtime/testing';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, sendMessage } from './support/browser.js';

const echo = defineAgent({
  name: 'echo',
  description: 'Repeats the message',
  keywords: ['echo'],
  run: (message) => `echo: ${message}`,
});

/** Sends the message to two agents at once, then joins their answers. */
class FanOut extends AbstractOrchestrator {
  protected handleMessage(conversation: Conversation) {
    const results = latestToolResults(conversation);
    if (results.length > 0) return routeToUser(results.map((result) => result.content).join(' | '));
    const text = currentUserMessage(conversation).content;
    return [
      toolCall('echo', text, { reason: 'everyone hears it' }),
      toolCall('shout', text, { reason: 'everyone hears it' }),
    ];
  }
}

function createApp(agents: Agent[], options: Partial<AppOptions> = {}): App {
  return new App({ name: 'console-features', agents, console: true, logLevel: 'silent', ...options });
}

function startKeywordApp(agents: Agent[], options: Partial<AppOptions> = {}): Promise<ServerHandle> {
  const app = createApp(agents, options);
  return app.start(new KeywordOrchestrator({ agents: app.agentMetas, fallbackAgent: 'echo' }), { port: 0 });
}

let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
});

describe('the console in a browser, beyond chat', () => {
  it('follows a turn that is running when the session opens (a reload), until its answer', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const slow = defineAgent({
      name: 'slow',
      description: 'Answers when let through',
      keywords: ['slow'],
      async *run() {
        yield 'working… ';
        await gate;
        yield 'done';
      },
    });
    const server = await startKeywordApp([echo, slow]);
    const { page, blocked, errors } = await openPage(browser);
    try {
      // Another tab (or this one before a reload) started the turn; it is running when the page opens.
      const started = fetch(`${server.url}/v1/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'slow please', sessionId: 'reloaded' }),
      });
      for (let tries = 0; tries < 500; tries++) {
        const session = await fetch(`${server.url}/v1/sessions/reloaded`);
        if (session.status === 200 && ((await session.json()) as { activeTurn?: unknown }).activeTurn) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await page.goto(`${server.url}/#session=reloaded`);
      await expect.poll(() => page.locator('#status').textContent()).toBe('Streaming the reply…');
      open();
      const answers = page.locator('#messages .message.assistant .content');
      await expect.poll(() => answers.last().textContent()).toBe('working… done');
      await expect.poll(() => page.locator('#status').textContent()).toBe('Reply received.');
      await started;
      expect(blocked).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await server.close();
    }
  });

  it('shows a call waiting for approval, runs it when approved and drops it when rejected', async () => {
    const refunds: string[] = [];
    const payouts = defineAgent({
      name: 'payouts',
      description: 'Refunds orders',
      keywords: ['refund'],
      requiresApproval: true,
      run: (message) => {
        refunds.push(message);
        return `refunded: ${message}`;
      },
    });
    const server = await startKeywordApp([echo, payouts]);
    const { page, blocked, errors } = await openPage(browser);
    try {
      await page.goto(`${server.url}/`);
      await expect.poll(() => page.locator('#agents').textContent()).toContain('needs approval');

      await sendMessage(page, 'refund order 7');
      const panel = page.locator('#approvals-section');
      await expect.poll(() => panel.isVisible()).toBe(true);
      expect(await page.locator('#approvals .approval').textContent()).toContain('payouts');
      expect(refunds).toEqual([]);
      await page.getByRole('button', { name: /^Approve payouts/ }).click();
      const answers = page.locator('#messages .message.assistant .content');
      await expect.poll(() => answers.allTextContents()).toEqual(['refunded: refund order 7']);
      await expect.poll(() => panel.isVisible()).toBe(false);
      expect(refunds).toEqual(['refund order 7']);
      expect(await page.locator('#turns .turn').first().locator('.badge').first().textContent()).toBe(
        'completed',
      );

      await sendMessage(page, 'refund order 8');
      await expect.poll(() => panel.isVisible()).toBe(true);
      await page.getByRole('button', { name: /^Reject payouts/ }).click();
      await expect.poll(() => panel.isVisible()).toBe(false);
      await expect.poll(() => page.locator('#status').textContent()).toBe('Rejected.');
      expect(refunds).toEqual(['refund order 7']);

      expect(blocked).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await server.close();
    }
  });

  it('puts the calls of a fan-out side by side in one decision', async () => {
    const shout = defineAgent({
      name: 'shout',
      description: 'Shouts the message',
      run: (message) => message.toUpperCase(),
    });
    const app = createApp([echo, shout]);
    const server = await app.start(new FanOut({ name: 'fan-out', agents: app.agentMetas }), { port: 0 });
    const { page, blocked, errors } = await openPage(browser);
    try {
      await page.goto(`${server.url}/`);
      await sendMessage(page, 'hello both');
      const answers = page.locator('#messages .message.assistant .content');
      await expect.poll(() => answers.allTextContents()).toEqual(['echo: hello both | HELLO BOTH']);

      const fanOut = page.locator('#turns .step .calls.fan-out');
      await expect.poll(() => fanOut.count()).toBe(1);
      const calls = fanOut.locator('.call');
      expect(
        await calls.evaluateAll((items) => items.map((item) => item.getAttribute('data-agent'))),
      ).toEqual(['echo', 'shout']);
      // Side by side: the two calls share a row.
      const [left, right] = [await calls.nth(0).boundingBox(), await calls.nth(1).boundingBox()];
      expect(left && right && Math.abs(left.y - right.y)).toBe(0);
      expect(left && right && right.x > left.x).toBe(true);
      expect(await page.locator('#turns .step').first().locator('.chosen').textContent()).toBe(
        ' → echo, shout',
      );
      // No step rules: the decision chose among every agent.
      expect(await page.locator('#turns .step').first().locator('.candidates').textContent()).toBe(
        'Candidates: all 2 agents',
      );

      expect(blocked).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await server.close();
    }
  });

  it('links a traced turn to its trace in Langfuse, live and after reopening the session', async () => {
    const recording = recordSpans();
    const server = await startKeywordApp([echo], { console: { langfuseUrl: 'https://langfuse.test/' } });
    const { page, blocked, errors } = await openPage(browser);
    try {
      await page.goto(`${server.url}/`);
      await sendMessage(page, 'echo traced');
      const link = page.locator('#turns .turn a.trace');
      await expect.poll(() => link.count()).toBe(1);
      const traceIds = new Set(recording.spans.map((span) => span.spanContext().traceId));
      const href = (await link.getAttribute('href')) ?? '';
      const traceId = /^https:\/\/langfuse\.test\/trace\/([0-9a-f]{32})$/.exec(href)?.[1];
      expect(traceId && traceIds.has(traceId)).toBe(true);
      expect(await link.textContent()).toBe('Trace in Langfuse');
      expect(await link.getAttribute('target')).toBe('_blank');

      // The stored turn keeps the link.
      await page.reload();
      await expect.poll(() => link.getAttribute('href')).toBe(href);

      expect(blocked).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await server.close();
      await recording.shutdown();
    }
  });

  it("lists a decision's candidates: the agents its step allows", async () => {
    const vault = defineAgent({
      name: 'vault',
      description: 'Opens the vault',
      keywords: ['open'],
      run: () => 'open',
    });
    const app = createApp([echo, vault]);
    const router = withSteps(new KeywordOrchestrator({ agents: app.agentMetas, fallbackAgent: 'echo' }), {
      steps: [{ name: 'browse', description: 'Looking around', isDefault: true, denied: ['vault'] }],
    });
    const server = await app.start(router, { port: 0 });
    const { page, blocked, errors } = await openPage(browser);
    try {
      await page.goto(`${server.url}/`);
      await sendMessage(page, 'echo hi');
      const answers = page.locator('#messages .message.assistant .content');
      await expect.poll(() => answers.allTextContents()).toEqual(['echo: echo hi']);
      const first = page.locator('#turns .step').first();
      await expect.poll(() => first.locator('.candidates').textContent()).toBe('Candidates: echo');
      // Shown once, as candidates, not again among the annotations.
      expect(await first.locator('.annotations').textContent()).not.toContain('allowedAgents');
      expect(await first.locator('.annotations').textContent()).toContain('browse');

      expect(blocked).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await server.close();
    }
  });

  it('shows the newest 50 messages of a long session and loads the older ones on request', async () => {
    const server = await startKeywordApp([echo]);
    const sessionId = 'long-session';
    // 20 turns of 3 messages each (you, the agent, the answer): 60 messages, more than a page.
    for (let turn = 1; turn <= 20; turn += 1) {
      const response = await fetch(`${server.url}/v1/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message: `echo ${turn}`, sessionId }),
      });
      expect(response.status).toBe(200);
    }
    const { page, blocked, errors } = await openPage(browser);
    try {
      await page.goto(`${server.url}/#session=${sessionId}`);
      const messages = page.locator('#messages li');
      const loadOlder = page.getByRole('button', { name: 'Load older messages' });
      await expect.poll(() => messages.count()).toBe(50);
      expect(await loadOlder.isVisible()).toBe(true);
      expect(await messages.first().textContent()).not.toContain('echo 1');

      await loadOlder.click();
      await expect.poll(() => messages.count()).toBe(60);
      expect(await loadOlder.isVisible()).toBe(false);
      const users = page.locator('#messages .message.user .content');
      expect(await users.allTextContents()).toEqual(
        Array.from({ length: 20 }, (_, index) => `echo ${index + 1}`),
      );
      expect(await page.locator('#turns .turn').count()).toBe(20);

      // A new message keeps the older messages on screen.
      await sendMessage(page, 'echo 21');
      await expect.poll(() => messages.count()).toBe(63);
      expect(await users.first().textContent()).toBe('echo 1');
      expect(await page.locator('#turns .turn').count()).toBe(21);

      expect(blocked).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await server.close();
    }
  });

  it('shows a failed call in red', async () => {
    const broken = defineAgent({
      name: 'broken',
      description: 'Always fails',
      keywords: ['break'],
      run: () => {
        throw new Error('disk on fire');
      },
    });
    const server = await startKeywordApp([echo, broken]);
    const { page, blocked, errors } = await openPage(browser);
    try {
      await page.goto(`${server.url}/`);
      await sendMessage(page, 'break it');
      const call = page.locator('#turns .call[data-agent="broken"]');
      await expect.poll(() => call.getAttribute('class')).toBe('call failed');
      await expect.poll(() => page.locator('#status').textContent()).not.toBe('Streaming the reply…');
      expect(await call.locator('.badge').textContent()).toBe('error');
      // A string: the tests are type-checked without the DOM library.
      const color = await page.evaluate(
        `getComputedStyle(document.querySelector('#turns .call[data-agent="broken"]')).color`,
      );
      expect(color).toBe('rgb(179, 38, 30)');
      expect(await page.locator('#messages .message.agent.failed').count()).toBe(1);

      expect(blocked).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await server.close();
    }
  });

  it("shows each agent's recent calls on its card when a breaker keeps them, after every turn", async () => {
    const broken = defineAgent({
      name: 'broken',
      description: 'Always fails',
      keywords: ['break'],
      run: () => {
        throw new Error('disk on fire');
      },
    });
    const app = createApp([echo, broken]);
    const router = new KeywordOrchestrator({ agents: app.agentMetas, fallbackAgent: 'echo' });
    const server = await app.start(withBreaker(router, { failures: 5 }), { port: 0 });
    const { page, blocked, errors } = await openPage(browser);
    try {
      await page.goto(`${server.url}/`);
      await expect.poll(() => page.locator('#agents').textContent()).toContain('Always fails');
      expect(await page.locator('#agents .agent-stats').count()).toBe(0);
      await sendMessage(page, 'break it');
      const brokenStats = page.locator('#agents li', { hasText: 'Always fails' }).locator('.agent-stats');
      await expect
        .poll(() => brokenStats.textContent())
        .toMatch(/^1 call · 0% ok · p50 \d+ ms · p95 \d+ ms · agent_error ×1$/);
      const color = await page.evaluate(
        `getComputedStyle(document.querySelector('#agents .agent-stats.failing')).color`,
      );
      expect(color).toBe('rgb(179, 38, 30)');
      await sendMessage(page, 'echo hello');
      const echoStats = page
        .locator('#agents li', { hasText: 'Repeats the message' })
        .locator('.agent-stats');
      await expect.poll(() => echoStats.textContent()).toMatch(/^1 call · 100% ok · p50 \d+ ms/);
      expect(blocked).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await server.close();
    }
  });
});
