import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { bullmqTurnQueue } from '../../src/bullmq.js';
import { createApp, echoAgent, postJson } from '../support/app-fixtures.js';

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('background turns on BullMQ with Redis unreachable', () => {
  it('answer 503 store_unavailable within the queue timeout, naming no host, and the app still closes', async () => {
    const port = await closedPort();
    const queue = bullmqTurnQueue({ connection: `redis://127.0.0.1:${port}`, commandTimeoutMs: 300 });
    const { app } = createApp({ agents: [echoAgent()], background: { queue } });
    const response = await app.request('/v1/chat', postJson({ message: 'echo: x', background: true }));
    expect(response.status).toBe(503);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('store_unavailable');
    expect(body.error.message).not.toContain(String(port));
    expect(body.error.message).not.toContain('127.0.0.1');
    // Nothing was queued: the list shows the turn as failed, not queued.
    const listed = (await (await app.request('/v1/background-turns')).json()) as {
      data: Array<{ status: string }>;
    };
    expect(listed.data.map((turn) => turn.status)).toEqual(['failed']);
    await app.close();
  });
});
