import { describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import { InMemoryTurnQueue } from '../../src/background/in-memory-turn-queue.js';
import { createApp, sleep } from '../support/app-fixtures.js';
import { parseSamples } from '../support/prometheus-text.js';

describe('metrics of background turns', () => {
  it('count turns queued, started and cancelled while queued, with no turn id in a label', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const gated = defineAgent({
      name: 'echo',
      description: 'Answers once let through',
      run: async (message) => {
        await gate;
        return message;
      },
    });
    const { app } = createApp({
      name: 'desk',
      agents: [gated],
      metrics: true,
      background: { queue: new InMemoryTurnQueue({ concurrency: 1 }) },
    });
    const first = await app.chat({ message: 'echo: a', background: true });
    const second = await app.chat({ message: 'echo: b', background: true });
    const cancel = await app.request(`/v1/sessions/${second.sessionId}/turns/${second.turnId}/cancel`, {
      method: 'POST',
    });
    expect(cancel.status).toBe(200);
    release();
    for (let attempt = 0; attempt < 200; attempt += 1) {
      const view = await app.background?.status(first.sessionId, first.turnId);
      if (view?.status === 'completed') break;
      await sleep(10);
    }
    const text = await (await app.request('/metrics')).text();
    const counted = (event: string) =>
      parseSamples(text).find(
        (sample) => sample.name === 'switchboard_background_turns_total' && sample.labels.event === event,
      )?.value;
    expect([counted('queued'), counted('started'), counted('cancelled')]).toEqual([2, 1, 1]);
    expect(text).not.toContain(first.turnId);
    await app.close();
  });
});
