import { latestToolResults, type MessageItem } from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { createApp, failingAgent, fanOut, hangingAgent, slowAgent } from '../support/app-fixtures.js';

describe('fan-out: an orchestrator returning several calls', () => {
  let app: App | undefined;
  afterEach(() => app?.close());

  it('runs the calls concurrently: each starts before the other ends', async () => {
    const maps = slowAgent('maps', 100);
    const weather = slowAgent('weather', 100);
    app = createApp({ agents: [maps, weather], handler: fanOut(['maps', 'weather']) }).app;

    const result = await app.chat({ message: 'plan a hike' });

    expect(result.reply).toBe('maps done: plan a hike\nweather done: plan a hike');
    // Overlap, not a wall-clock bound: each started before the other ended.
    expect(maps.runs[0]!.startedAt).toBeLessThan(weather.runs[0]!.endedAt!);
    expect(weather.runs[0]!.startedAt).toBeLessThan(maps.runs[0]!.endedAt!);
  });

  it('stores each reply as it arrives (the faster first), then asks the orchestrator with both in call order', async () => {
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
      ['tool', 'fast done: both please'],
      ['tool', 'slow done: both please'],
      ['assistant', 'slow done: both please\nfast done: both please'],
    ]);
    expect(stored.slice(1, 3).map((message) => message.role === 'tool' && message.toolCallId)).toEqual(
      [...calls].reverse().map((call) => call.toolCallId),
    );

    // The second decision saw the history as stored, and the replies to its calls in call order.
    expect(created.orchestrator.seen).toHaveLength(2);
    const [second] = created.orchestrator.seen.slice(1);
    expect(second!.messages.map((message) => message.content)).toEqual(
      stored.slice(0, 3).map((m) => m.content),
    );
    expect(latestToolResults(second!).map((message) => message.name)).toEqual(['slow', 'fast']);
  });

  it('reports every call to the orchestrator, failed and timed-out ones included, without delaying the others', async () => {
    const created = createApp({
      agents: [slowAgent('fine', 10), failingAgent('broken', 'no route to host'), hangingAgent('stuck', 50)],
      handler: fanOut(['fine', 'broken', 'stuck']),
    });
    app = created.app;
    const result = await app.chat({ message: 'do it all' });

    expect(result.status).toBe('completed');
    // Nobody waited for the stuck agent: the others' replies were stored before its timeout was.
    const stored = await app.sessions.read(result.sessionId);
    expect(stored.filter((message) => message.role === 'tool').map((message) => message.name)).toEqual([
      'broken',
      'fine',
      'stuck',
    ]);
    const results = latestToolResults(created.orchestrator.seen[1]!);
    expect(results.map((message) => [message.name, message.status])).toEqual([
      ['fine', 'ok'],
      ['broken', 'error'],
      ['stuck', 'error'],
    ]);
    expect(result.reply.split('\n')).toEqual([
      'fine done: do it all',
      "Sorry, the broken agent failed: Agent 'broken' failed (agent_error)",
      "Sorry, the stuck agent failed: Agent 'stuck' timed out after 50 ms (agent_timeout)",
    ]);
    expect(results.map((message) => message.metadata?.errorDetail)).toEqual([
      undefined,
      "Agent 'broken' failed: no route to host",
      "Agent 'stuck' failed: timed out after 50 ms",
    ]);
  });
});
