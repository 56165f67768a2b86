import { latestToolResults, type MessageItem } from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { createApp, failingAgent, fanOut, hangingAgent, slowAgent } from '../support/app-fixtures.js';

describe('fan-out: an orchestrator returning several calls', () => {
  let app: App | undefined;
  afterEach(() => app?.close());

  it('runs the calls concurrently: two 100 ms agents finish in well under 200 ms', async () => {
    const maps = slowAgent('maps', 100);
    const weather = slowAgent('weather', 100);
    app = createApp({ agents: [maps, weather], handler: fanOut(['maps', 'weather']) }).app;

    const startedAt = performance.now();
    const result = await app.chat({ message: 'plan a hike' });
    const elapsed = performance.now() - startedAt;

    expect(result.reply).toBe('maps done: plan a hike\nweather done: plan a hike');
    expect(elapsed).toBeLessThan(190);
    // Each started before the other ended.
    expect(maps.runs[0]!.startedAt).toBeLessThan(weather.runs[0]!.endedAt!);
    expect(weather.runs[0]!.startedAt).toBeLessThan(maps.runs[0]!.endedAt!);
  });

  it('appends the replies in call order even when the second call finishes first, then asks the orchestrator with both', async () => {
    const created = createApp({
      agents: [slowAgent('slow', 60), slowAgent('fast', 5)],
      handler: fanOut(['slow', 'fast']),
    });
    app = created.app;
    const result = await app.chat({ message: 'both please', sessionId: 'ordered' });

    const calls = result.steps[0]!.calls;
    expect(result.steps[0]).toMatchObject({ kind: 'fan-out', calls: [{ agent: 'slow' }, { agent: 'fast' }] });
    const stored = await app.sessions.read('ordered');
    expect(stored.map((message: MessageItem) => [message.role, message.content])).toEqual([
      ['user', 'both please'],
      ['tool', 'slow done: both please'],
      ['tool', 'fast done: both please'],
      ['assistant', 'slow done: both please\nfast done: both please'],
    ]);
    expect(stored.slice(1, 3).map((message) => message.role === 'tool' && message.toolCallId)).toEqual(
      calls.map((call) => call.toolCallId),
    );

    // The second decision saw both replies, in call order.
    expect(created.orchestrator.seen).toHaveLength(2);
    const [second] = created.orchestrator.seen.slice(1);
    expect(latestToolResults(second!).map((message) => message.name)).toEqual(['slow', 'fast']);
  });

  it('reports every call to the orchestrator, failed and timed-out ones included, without delaying the others', async () => {
    const created = createApp({
      agents: [slowAgent('fine', 10), failingAgent('broken', 'no route to host'), hangingAgent('stuck', 50)],
      handler: fanOut(['fine', 'broken', 'stuck']),
    });
    app = created.app;
    const startedAt = performance.now();
    const result = await app.chat({ message: 'do it all' });

    expect(performance.now() - startedAt).toBeLessThan(500);
    expect(result.status).toBe('completed');
    const results = latestToolResults(created.orchestrator.seen[1]!);
    expect(results.map((message) => [message.name, message.status])).toEqual([
      ['fine', 'ok'],
      ['broken', 'error'],
      ['stuck', 'error'],
    ]);
    expect(result.reply.split('\n')).toEqual([
      'fine done: do it all',
      "Sorry, the broken agent failed: Agent 'broken' failed: no route to host",
      "Sorry, the stuck agent failed: Agent 'stuck' failed: timed out after 50 ms",
    ]);
  });
});
