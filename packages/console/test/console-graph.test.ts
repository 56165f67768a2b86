/**
 * The console draws a graph orchestrator's workflow (published on
 * GET /v1/agents) in a real headless Chromium, and marks the path of the
 * turn shown. A screenshot of the drawing is taken and checked to hold
 * every node.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { END, stateGraph } from '@switchboard/orchestrators';
import { App, agentMeta, defineAgent, type ServerHandle } from '@switchboard/runtime';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { launchBrowser, openPage, sendMessage } from './support/browser.js';

const classifier = defineAgent({
  name: 'classifier',
  description: 'Says billing or technical',
  run: (message) => (/refund/i.test(message) ? 'billing' : 'technical'),
});

function deskGraph() {
  return stateGraph({
    name: 'desk',
    state: z.object({
      request: z.string(),
      kind: z.string().optional(),
      notes: z.array(z.string()).default([]),
    }),
    reducers: { notes: 'append' },
    input: (message) => ({ request: message }),
  })
    .agentNode('classify', { agent: 'classifier', task: (s) => s.request, into: 'kind' })
    .node('billing', () => ({ notes: ['billing'] }))
    .node('technical', () => ({ notes: ['technical'] }))
    .node('account', () => ({ notes: ['account'] }))
    .node('knowledge', () => ({ notes: ['knowledge'] }))
    .node('review', () => ({ notes: ['review'] }), {
      approval: (s) => (s.request.includes('9999') ? 'big' : false),
    })
    .entry('classify')
    .conditionalEdge('classify', (s) => (s.kind === 'billing' ? 'billing' : 'technical'), [
      'billing',
      'technical',
    ])
    .edge('billing', ['account', 'knowledge'])
    .edge('technical', ['account', 'knowledge'])
    .edge('account', 'review')
    .edge('knowledge', 'review')
    .edge('review', END)
    .respond((s) => s.notes.join(' > '))
    .compile({ agents: [agentMeta(classifier)] });
}

const NODES = ['classify', 'billing', 'technical', 'account', 'knowledge', 'review'];

let browser: Browser;
let server: ServerHandle;
let shots: string;

beforeAll(async () => {
  browser = await launchBrowser();
  const app = new App({ name: 'graph-console', agents: [classifier], console: true, logLevel: 'silent' });
  server = await app.start(deskGraph(), { port: 0 });
  shots = mkdtempSync(join(tmpdir(), 'switchboard-console-graph-'));
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  rmSync(shots, { recursive: true, force: true });
});

describe('the console draws a graph orchestrator', () => {
  it('draws every node and marks the path the turn took', async () => {
    const { page, blocked, errors } = await openPage(browser);
    await page.goto(`${server.url}/`);
    const drawing = page.locator('#graph svg.graph-picture');
    await drawing.waitFor();
    const drawn = await page
      .locator('#graph [data-node]')
      .evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-node')));
    expect(drawn).toEqual(expect.arrayContaining([...NODES, '__start__', '__end__']));
    // Every node is visible and inside the drawing, with its name as text.
    const box = await drawing.boundingBox();
    for (const name of NODES) {
      const node = page.locator(`#graph [data-node="${name}"]`);
      await expect.poll(() => node.locator('text').textContent()).toBe(name);
      const nodeBox = await node.boundingBox();
      expect(nodeBox && box && nodeBox.x >= box.x && nodeBox.x + nodeBox.width <= box.x + box.width + 1).toBe(
        true,
      );
    }
    expect(await page.locator('#graph [data-node="review"]').getAttribute('class')).toContain('approval');

    await sendMessage(page, 'a refund please');
    await expect
      .poll(() => page.locator('#messages').textContent())
      .toContain('billing > account > knowledge > review');
    const taken = () =>
      page
        .locator('#graph .graph-node.taken')
        .evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-node')));
    await expect.poll(taken).toEqual(['classify', 'billing', 'account', 'knowledge', 'review']);

    // GRAPH_SCREENSHOT=path keeps the picture to look at.
    const file = process.env.GRAPH_SCREENSHOT ?? join(shots, 'graph.png');
    await drawing.screenshot({ path: file });
    const png = readFileSync(file);
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(png.length).toBeGreaterThan(2_000);
    expect(errors).toEqual([]);
    expect(blocked).toEqual([]);
  }, 30_000);
});
