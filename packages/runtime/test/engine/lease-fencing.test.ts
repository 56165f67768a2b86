import { describe, expect, it } from 'vitest';
import { createApp, postJson, slowAgent } from '../support/app-fixtures.js';

describe('a turn that outlives its lease', () => {
  it('keeps the session while it runs: renewal holds off a waiting turn, which follows it', async () => {
    // Renewed every 250 ms, a 600 ms lease outlives a 1.2 s agent call while the next turn waits.
    const slow = slowAgent('slow', 1_200);
    const { app } = createApp({ agents: [slow], leaseTtlMs: 600, sessionWaitMs: 5_000 });
    try {
      const first = app.chat({ message: 'slow: first', sessionId: 'renewed' });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const second = app.chat({ message: 'slow: second', sessionId: 'renewed' });
      expect((await first).status).toBe('completed');
      expect((await second).status).toBe('completed');
      expect(slow.runs.map((run) => run.message)).toEqual(['first', 'second']);
      expect(slow.runs[1]!.startedAt).toBeGreaterThanOrEqual(slow.runs[0]!.endedAt!);
      const history = await app.sessions.read('renewed');
      expect(history.map((message) => message.role)).toEqual([
        'user',
        'tool',
        'assistant',
        'user',
        'tool',
        'assistant',
      ]);
    } finally {
      await app.close();
    }
  });

  it('stops writing once another turn took the session: 409 for it, a clean history for the other', async () => {
    // Renewal runs every 250 ms at the least, so a 100 ms lease expires under a 400 ms agent call,
    // and the waiting turn takes the session over.
    const slow = slowAgent('slow', 400);
    const { app } = createApp({ agents: [slow], leaseTtlMs: 100, sessionWaitMs: 5_000 });
    try {
      const stalled = app.request('/v1/chat', postJson({ message: 'slow: first', sessionId: 'fenced' }));
      await new Promise((resolve) => setTimeout(resolve, 20));
      const next = app.request('/v1/chat', postJson({ message: 'slow: second', sessionId: 'fenced' }));

      const [stalledResponse, nextResponse] = await Promise.all([stalled, next]);
      expect(stalledResponse.status).toBe(409);
      expect(await stalledResponse.json()).toMatchObject({
        error: { code: 'session_busy', message: expect.stringContaining('taken over') },
      });
      expect(nextResponse.status).toBe(200);
      expect(await nextResponse.json()).toMatchObject({ status: 'completed' });

      // The stalled turn's agent reply and answer were never stored: the other turn's messages follow
      // its user message without anything interleaved.
      const session = (await (await app.request('/v1/sessions/fenced')).json()) as {
        messages: { role: string; content: string }[];
        turns: unknown[];
      };
      expect(session.messages.map((message) => [message.role, message.content])).toEqual([
        ['user', 'slow: first'],
        ['user', 'slow: second'],
        ['tool', 'slow done: second'],
        ['assistant', expect.stringContaining('slow done: second')],
      ]);
      expect(session.turns).toHaveLength(1);
    } finally {
      await app.close();
    }
  });
});
