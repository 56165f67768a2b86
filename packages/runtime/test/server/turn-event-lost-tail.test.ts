import { describe, expect, it } from 'vitest';
import type { TurnEvent } from '../../src/engine/events.js';
import { InMemoryTurnEventLog } from '../../src/stores/in-memory-turn-event-log.js';
import type { TurnLogKey } from '../../src/stores/turn-event-log.js';
import { createApp, echoAgent, postJson, readEventStream } from '../support/app-fixtures.js';

/** A log whose replica "died" right after storing each turn's end: its answer and end never reach the log. */
class LostTailLog extends InMemoryTurnEventLog {
  override append(key: TurnLogKey, event: TurnEvent): void {
    if (event.type === 'message' || event.type === 'turn-end') return;
    super.append(key, event);
  }
}

describe("a turn's stream when its replica stopped between storing the end and logging it", () => {
  it('replays the stored answer and end after what was logged, once each', async () => {
    const { app } = createApp({ agents: [echoAgent()], eventLog: new LostTailLog() });
    const result = (await (
      await app.request('/v1/chat', postJson({ message: 'echo: kept', sessionId: 'tail' }))
    ).json()) as {
      turnId: string;
    };
    const events = await readEventStream(
      await app.request(`/v1/sessions/tail/turns/${result.turnId}/events`),
    );
    const types = events.map((event) => event.event);
    expect(types.slice(-2)).toEqual(['message', 'turn-end']);
    expect(types.filter((type) => type === 'message')).toHaveLength(1);
    expect(JSON.stringify(events.at(-2)?.data)).toContain('kept');
    await app.close();
  });

  it('does not repeat an answer the log kept', async () => {
    const { app } = createApp({ agents: [echoAgent()] });
    const result = (await (
      await app.request('/v1/chat', postJson({ message: 'echo: once', sessionId: 'kept' }))
    ).json()) as {
      turnId: string;
    };
    const events = await readEventStream(
      await app.request(`/v1/sessions/kept/turns/${result.turnId}/events`),
    );
    expect(events.filter((event) => event.event === 'message')).toHaveLength(1);
    await app.close();
  });
});
