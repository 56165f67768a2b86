/**
 * The console's Background panel in a real headless Chromium: a message
 * sent in the background (its 202 receipt), background turns going from
 * `queued` to `running` to `completed` (one runs at a time here, so the
 * second waits behind the first), a running one followed live from the
 * panel (and no longer once another session opens), the answer of one of
 * the open session shown when it ends, a queued one cancelled, schedules
 * listed, added and deleted, a server without background turns, and the
 * panel reading the server only while it is open and the tab visible. One server and one
 * browser for the file; every request to another host is refused.
 */
import { KeywordOrchestrator } from '@switchboard/orchestrators';
import { App, defineAgent, InMemoryTurnQueue, type ServerHandle } from '@switchboard/runtime';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, sendMessage } from './support/browser.js';

/** A gate per message: the `slow` agent streams `working… `, waits for its message's gate, then `done`. */
const gates = new Map<string, { opened: Promise<void>; open: () => void }>();
function gate(message: string) {
  let entry = gates.get(message);
  if (!entry) {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    entry = { opened, open };
    gates.set(message, entry);
  }
  return entry;
}

const slow = defineAgent({
  name: 'slow',
  description: 'Answers when let through',
  keywords: ['slow'],
  async *run(message) {
    yield 'working… ';
    await gate(message).opened;
    yield 'done';
  },
});
const echo = defineAgent({
  name: 'echo',
  description: 'Repeats the message',
  keywords: ['echo'],
  run: (message) => `echo: ${message}`,
});

let browser: Browser;
let server: ServerHandle;

beforeAll(async () => {
  const app = new App({
    name: 'console-background',
    agents: [echo, slow],
    console: true,
    logLevel: 'silent',
    // One background turn at a time: the next one waits, queued, behind it.
    background: { queue: new InMemoryTurnQueue({ concurrency: 1 }) },
  });
  [browser, server] = await Promise.all([
    launchBrowser(),
    app.start(new KeywordOrchestrator({ agents: app.agentMetas, fallbackAgent: 'echo' }), { port: 0 }),
  ]);
});

afterAll(async () => {
  for (const { open } of gates.values()) open();
  await browser?.close();
  await server?.close();
});

/** Queues a background turn through the API: its turn and session ids. */
async function queue(message: string): Promise<{ turnId: string; sessionId: string }> {
  const response = await fetch(`${server.url}/v1/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ message, background: true }),
  });
  expect(response.status).toBe(202);
  return (await response.json()) as { turnId: string; sessionId: string };
}

/**
 * Runs `steps` on a fresh page, then checks that it reached no other host
 * and threw nothing. `clocked` (the default): the page's timers run on a
 * clock the test may move; time flows as usual, and {@link statusOf} jumps
 * a second ahead at each look, so the panel's next read (every 2 s) comes
 * without waiting for it.
 */
async function onPage(steps: (page: Page) => Promise<void>, { clocked = true } = {}): Promise<void> {
  const { page, blocked, errors } = await openPage(browser);
  page.setDefaultTimeout(10_000);
  try {
    if (clocked) await page.clock.install();
    await steps(page);
    expect(blocked).toEqual([]);
    expect(errors).toEqual([]);
  } finally {
    await page.context().close();
  }
}

/** The status a turn's row (a row, or a turn id) shows, looked at a second later on the page's clock. */
function statusOf(page: Page, row: Locator | string) {
  const locator = typeof row === 'string' ? page.locator(`#background-turns [data-turn-id="${row}"]`) : row;
  return async () => {
    await page.clock.fastForward(1_000);
    return locator.getAttribute('data-status');
  };
}

describe('the Background panel', () => {
  it('queues the message in the background, then shows the turn queued, running and completed', async () => {
    await onPage(async (page) => {
      await page.goto(`${server.url}/`);
      await page.getByLabel('In background').check();
      await sendMessage(page, 'slow first');
      await expect
        .poll(() => page.locator('#status').textContent())
        .toMatch(/^Queued in the background: turn turn_\S+ in session \S+ \(queued\)\.$/);
      // The panel opened by itself and lists the turn, with its message.
      expect(await page.locator('#background-section').getAttribute('open')).toBe('');
      const first = page.locator('#background-turns .bg-turn', { hasText: 'slow first' });
      await expect.poll(statusOf(page, first)).toBe('running');

      await sendMessage(page, 'slow second');
      const second = page.locator('#background-turns .bg-turn', { hasText: 'slow second' });
      await expect.poll(statusOf(page, second)).toBe('queued');
      expect(await second.locator('.badge').textContent()).toBe('queued');
      expect(await second.locator('time').textContent()).toMatch(/^queued /);
      expect(await second.getByRole('button', { name: /^Cancel turn/ }).isVisible()).toBe(true);

      // Selecting the running turn opens its session and follows its events live.
      await first.getByRole('button', { name: /^Open session/ }).click();
      const agentBubble = page.locator('#messages .message.agent.streaming .content');
      await expect.poll(() => agentBubble.textContent()).toBe('working… ');
      gate('slow first').open();
      const answers = page.locator('#messages .message.assistant .content');
      await expect.poll(() => answers.allTextContents()).toEqual(['working… done']);
      await expect.poll(() => page.locator('#status').textContent()).toBe('Reply received.');

      // The first is finished (listed apart, no Cancel); the second runs now, then completes.
      await expect.poll(statusOf(page, second)).toBe('running');
      const finished = page.locator('#background-turns .bg-turns.finished .bg-turn', {
        hasText: 'slow first',
      });
      expect(await finished.getAttribute('data-status')).toBe('completed');
      expect(await finished.getByRole('button', { name: /^Cancel turn/ }).count()).toBe(0);
      gate('slow second').open();
      await expect.poll(statusOf(page, second)).toBe('completed');
    });
  });

  it('shows the answer of a background turn of the open session in the chat once the turn ends', async () => {
    await onPage(async (page) => {
      await page.goto(`${server.url}/`);
      await sendMessage(page, 'echo now');
      const answers = page.locator('#messages .message.assistant .content');
      await expect.poll(() => answers.allTextContents()).toEqual(['echo: echo now']);
      await page.getByLabel('In background').check();
      await sendMessage(page, 'slow meanwhile');
      const row = page.locator('#background-turns .bg-turn', { hasText: 'slow meanwhile' });
      await expect.poll(statusOf(page, row)).toBe('running');
      gate('slow meanwhile').open();
      await expect.poll(statusOf(page, row)).toBe('completed');
      await expect.poll(() => answers.allTextContents()).toEqual(['echo: echo now', 'working… done']);
      expect(await page.locator('#turns .turn').count()).toBe(2);
      // One that has ended by the panel's next read shows too.
      await sendMessage(page, 'echo quick');
      await expect
        .poll(() => answers.allTextContents())
        .toEqual(['echo: echo now', 'working… done', 'echo: echo quick']);
    });
  });

  it('cancels a queued turn: it shows interrupted and never runs', async () => {
    const running = await queue('slow blocker');
    const waiting = await queue('echo never');
    await onPage(async (page) => {
      await page.goto(`${server.url}/`);
      await page.locator('#background-section summary').click();
      await expect.poll(statusOf(page, running.turnId)).toBe('running');
      await expect.poll(statusOf(page, waiting.turnId)).toBe('queued');
      await page.getByRole('button', { name: `Cancel turn ${waiting.turnId}` }).click();
      await expect.poll(statusOf(page, waiting.turnId)).toBe('interrupted');
      await expect
        .poll(() => page.locator('#status').textContent())
        .toBe(`Cancelled turn ${waiting.turnId}.`);

      gate('slow blocker').open();
      await expect.poll(statusOf(page, running.turnId)).toBe('completed');
      const turn = await fetch(`${server.url}/v1/sessions/${waiting.sessionId}/turns/${waiting.turnId}`);
      expect(((await turn.json()) as { status: string }).status).toBe('interrupted');
      // Its session holds nothing: the turn never ran.
      expect((await fetch(`${server.url}/v1/sessions/${waiting.sessionId}`)).status).toBe(404);
    });
  });

  it("stops following a running turn when another session opens: its answer stays out of that session's view", async () => {
    const done = await queue('echo elsewhere');
    await onPage(async (page) => {
      await page.goto(`${server.url}/`);
      await page.locator('#background-section summary').click();
      await expect.poll(statusOf(page, done.turnId)).toBe('completed');
      const running = await queue('slow followed');
      await expect.poll(statusOf(page, running.turnId)).toBe('running');
      const row = (turnId: string) => page.locator(`#background-turns [data-turn-id="${turnId}"]`);
      await row(running.turnId)
        .getByRole('button', { name: /^Open session/ })
        .click();
      await expect.poll(() => page.locator('#status').textContent()).toBe('Streaming the reply…');

      await row(done.turnId)
        .getByRole('button', { name: /^Open session/ })
        .click();
      await expect.poll(() => page.locator('#session-label').textContent()).toBe(`· ${done.sessionId}`);
      gate('slow followed').open();
      await expect.poll(statusOf(page, running.turnId)).toBe('completed');
      expect(await page.locator('#messages .content').allTextContents()).toEqual([
        'echo elsewhere',
        'echo: echo elsewhere',
        'echo: echo elsewhere',
      ]);
      expect(await page.locator('#send').isDisabled()).toBe(false);
    });
  });

  it('lists schedules, adds one and deletes one', async () => {
    const created = await fetch(`${server.url}/v1/schedules`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'echo hourly', every: 3_600_000 }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    await onPage(async (page) => {
      await page.goto(`${server.url}/`);
      await page.locator('#background-section summary').click();
      const rows = page.locator('#schedules .schedule');
      await expect.poll(() => rows.allTextContents()).toEqual([expect.stringContaining('echo hourly')]);
      expect(await rows.first().textContent()).toContain('every 60 min · new session each run');

      await page.getByLabel('Scheduled message').fill('echo daily');
      await page.getByLabel('Every (seconds)').fill('86400');
      await page.getByRole('button', { name: 'Add schedule' }).click();
      await expect.poll(() => rows.count()).toBe(2);
      await expect.poll(() => page.locator('#schedules').textContent()).toContain('every 1440 min');

      await page.getByRole('button', { name: `Delete schedule ${id}` }).click();
      await expect.poll(() => rows.allTextContents()).toEqual([expect.stringContaining('echo daily')]);
      const left = (await (await fetch(`${server.url}/v1/schedules`)).json()) as {
        data: Array<{ id: string; message: string; every: number }>;
      };
      expect(left.data.map(({ message, every }) => ({ message, every }))).toEqual([
        { message: 'echo daily', every: 86_400_000 },
      ]);
      for (const schedule of left.data)
        await fetch(`${server.url}/v1/schedules/${schedule.id}`, { method: 'DELETE' });
    });
  });

  it('says so on a server without background turns, and refuses a message queued there', async () => {
    const app = new App({
      name: 'plain',
      agents: [echo],
      console: true,
      logLevel: 'silent',
      background: false,
    });
    const router = new KeywordOrchestrator({ agents: app.agentMetas, fallbackAgent: 'echo' });
    const plain = await app.start(router, { port: 0 });
    try {
      await onPage(async (page) => {
        await page.goto(`${plain.url}/`);
        await page.locator('#background-section summary').click();
        const schedules = page.locator('#schedules');
        await expect.poll(() => schedules.textContent()).toBe('This server runs no schedules');
        expect(await page.locator('#background-turns').textContent()).toBe('Queued and runningNone');
        expect(await page.locator('#schedule-form').isVisible()).toBe(false);
        await page.getByLabel('In background').check();
        await sendMessage(page, 'echo later');
        await expect
          .poll(() => page.locator('#status').textContent())
          .toBe('Background turns are not enabled on this server');
        expect(await page.locator('#status').getAttribute('class')).toBe('status error-text');
      });
    } finally {
      await plain.close();
    }
  });

  it('reads the background turns every 2 s only while the panel is open', async () => {
    await onPage(
      async (page) => {
        let reads = 0;
        let answered = 0;
        const isRead = (url: string) => new URL(url).pathname === '/v1/background-turns';
        page.on('request', (request) => {
          if (isRead(request.url())) reads += 1;
        });
        page.on('requestfinished', (request) => {
          if (isRead(request.url())) answered += 1;
        });
        // The page's timers run on a clock the test moves.
        const start = new Date('2026-01-01T00:00:00Z').getTime();
        await page.clock.install({ time: start });
        await page.goto(`${server.url}/`);
        await page.clock.pauseAt(start + 60_000);
        await page.locator('#agents li').first().waitFor();
        expect(reads).toBe(0);

        await page.locator('#background-section summary').click();
        await expect.poll(() => reads).toBe(1);
        await expect.poll(() => page.locator('#background-turns h3').count()).toBeGreaterThan(0);
        // Half a second at a time: a read every fourth step, none skipped, none extra.
        const advance = async () => {
          await page.clock.runFor(500);
          return reads;
        };
        await expect.poll(advance).toBe(2);
        await expect.poll(advance).toBe(3);
        // Closed once the third read is answered (the clock stands still meanwhile): a minute later it has read nothing more.
        await expect.poll(() => answered).toBe(3);
        await page.locator('#background-section summary').click();
        await page.clock.runFor(60_000);
        expect(reads).toBe(3);
        // Open again: it reads at once, then every 2 s.
        await page.locator('#background-section summary').click();
        await expect.poll(() => reads).toBe(4);
        await expect.poll(advance).toBe(5);

        // The tab hidden (another tab in front): nothing more; shown again: it reads at once.
        await expect.poll(() => answered).toBe(5);
        const showTab = (state: string) =>
          page.evaluate(`Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => '${state}' });
          document.dispatchEvent(new Event('visibilitychange'));`);
        await showTab('hidden');
        await page.clock.runFor(60_000);
        expect(reads).toBe(5);
        await showTab('visible');
        await expect.poll(() => reads).toBe(6);
      },
      { clocked: false },
    );
  });
});
