import { describe, expect, it } from 'vitest';
import { useServerApps } from './support/server-apps.js';

const serve = useServerApps();

describe('the demo server’s METRICS switch', () => {
  it('serves no metrics by default', async () => {
    const { app } = serve({});
    expect((await app.request('/metrics')).status).toBe(404);
  });

  it('with METRICS=on, counts turns at /metrics in the Prometheus text format', async () => {
    const { app } = serve({ METRICS: 'on' });
    const turn = await app.request('/v1/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'what is 2 + 3 * 4?' }),
    });
    expect(turn.status).toBe(200);
    const response = await app.request('/metrics');
    expect(response.status).toBe(200);
    expect(await response.text()).toMatch(/switchboard_turns_total\{[^}]*status="completed"[^}]*\} 1\b/);
  });

  it('refuses a METRICS value it does not know', () => {
    expect(() => serve({ METRICS: 'maybe' })).toThrow(/METRICS must be on or off/);
  });
});
