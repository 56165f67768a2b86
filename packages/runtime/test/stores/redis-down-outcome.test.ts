import { describe, expect, it } from 'vitest';
import { createRedisStores } from '../../src/redis.js';
import { createApp, echoAgent, postJson } from '../support/app-fixtures.js';
import { useRedis } from '../support/redis.js';
import { startTcpProxy } from '../support/tcp-proxy.js';

const redis = useRedis();

describe('a chat while the connection to Redis is down', () => {
  it('answers 503 not_stored (the message was never sent), and stores nothing', async () => {
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: 6379 });
    const keyPrefix = redis.prefix();
    const { app } = createApp({
      agents: [echoAgent()],
      ...createRedisStores({ host: '127.0.0.1', port: proxy.port }, { keyPrefix, commandTimeoutMs: 500 }),
    });
    try {
      expect(
        (await app.request('/v1/chat', postJson({ message: 'hello', sessionId: 'ses-down' }))).status,
      ).toBe(200);
      await proxy.stop();
      // Once the client saw the connection drop (it then reconnects in the background), /readyz says so.
      while ((await app.request('/readyz')).status !== 503)
        await new Promise((resolve) => setTimeout(resolve, 10));

      const response = await app.request(
        '/v1/chat',
        postJson({ message: 'while down', sessionId: 'ses-down' }, { 'idempotency-key': 'down-1' }),
      );
      expect(response.status).toBe(503);
      const { error } = (await response.json()) as { error: Record<string, unknown> };
      expect(error).toMatchObject({ code: 'store_unavailable', outcome: 'not_stored' });
      expect(error.turnId).toBeUndefined();
      expect(error.message).toMatch(/nothing of this request was stored: send it again/);

      await proxy.start();
      while ((await app.request('/readyz')).status !== 200)
        await new Promise((resolve) => setTimeout(resolve, 20));
      const history = (await (await app.request('/v1/sessions/ses-down')).json()) as {
        messages: { content: string }[];
      };
      expect(history.messages.map((message) => message.content)).not.toContain('while down');
    } finally {
      await app.close();
      await proxy.stop();
    }
  });
});
