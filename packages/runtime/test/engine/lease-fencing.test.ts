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

  it('stops once another turn took the session: its agent is aborted, 409 for it, and the turn is recovered by the other', async () => {
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

      // The stalled turn's agent was aborted when its lease renewal found the lease gone (it never ended),
      // and nothing it produced was stored. The next request found its turn unfinished and resumed it
      // (running its call again) before its own.
      expect(slow.runs.map((run) => run.message)).toEqual(['first', 'first', 'second']);
      expect(slow.runs[0]!.endedAt).toBeUndefined();
      const session = (await (await app.request('/v1/sessions/fenced')).json()) as {
        messages: { role: string; content: string }[];
        turns: { status: string; recoveries?: number }[];
      };
      expect(session.messages.map((message) => [message.role, message.content])).toEqual([
        ['user', 'slow: first'],
        ['tool', 'slow done: first'],
        ['assistant', 'slow done: first'],
        ['user', 'slow: second'],
        ['tool', 'slow done: second'],
        ['assistant', 'slow done: second'],
      ]);
      expect(session.turns.map((turn) => [turn.status, turn.recoveries])).toEqual([
        ['completed', 1],
        ['completed', undefined],
      ]);
    } finally {
      await app.close();
    }
  });
});
