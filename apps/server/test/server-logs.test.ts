/**
 * What the server logs, as an operator's log collector receives it: JSON
 * lines on stdout (stdout is not a terminal here), the start-up line with
 * the whole configuration, one line per request, and never a secret.
 */
import { createOtlpReceiver } from '@switchboard/runtime/testing';
import { describe, expect, it } from 'vitest';
import { readConfig } from '../src/config.js';
import { startupConfig } from '../src/startup-config.js';
import { startServer, stop } from './support/server-process.js';

const SECRETS = {
  openAiKey: 'sk-openai-secret-0123456789abcdef',
  langfuseSecret: 'sk-lf-secret-0123456789abcdef',
  apiKey: 'sk-switchboard-secret-0123456789abcdef',
  redisPassword: 'hunter2-redis-password',
};

const parseLines = (text: string) =>
  text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown> & { msg: string });

describe('apps/server logs', () => {
  it('writes JSON lines: the configuration once at start-up, one line per request, and no secret', async () => {
    const receiver = await createOtlpReceiver();
    try {
      const server = startServer({
        ORCHESTRATOR: 'keyword',
        OPENAI_API_KEY: SECRETS.openAiKey,
        OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
        LANGFUSE_PUBLIC_KEY: 'pk-lf-test',
        LANGFUSE_SECRET_KEY: SECRETS.langfuseSecret,
        LANGFUSE_BASE_URL: receiver.url,
        SWITCHBOARD_API_KEYS: JSON.stringify({ [SECRETS.apiKey]: { tenantId: 'acme', name: 'acme-web' } }),
        LOG_LEVEL: 'debug',
      });
      const url = await server.listening;
      const response = await fetch(`${url}/v1/chat`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${SECRETS.apiKey}`,
          'x-request-id': 'ops-check-1',
        },
        body: JSON.stringify({ message: 'what is 2 + 3 * 4?' }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-request-id')).toBe('ops-check-1');
      const { sessionId } = (await response.json()) as { sessionId: string };
      expect(await stop(server)).toBe(0);

      const { stdout, stderr } = server.output();
      const lines = parseLines(stdout); // throws on any line that is not JSON
      const startup = lines.filter((line) => 'config' in line);
      expect(startup).toHaveLength(1);
      expect(startup[0]).toMatchObject({
        level: 30,
        url,
        msg: expect.stringContaining(`listening on ${url}`),
        config: {
          orchestrator: 'keyword',
          store: 'in-memory',
          openai: { apiKey: 'set', model: 'gpt-4o-mini', baseURL: 'http://127.0.0.1:9/v1' },
          auth: { apiKeys: 1, tenants: ['acme'] },
          tracing: ['langfuse'],
          logLevel: 'debug',
        },
      });
      expect(lines.filter((line) => line.msg === 'request completed')).toEqual([
        expect.objectContaining({
          method: 'POST',
          route: '/v1/chat',
          status: 200,
          requestId: 'ops-check-1',
          sessionId,
          tenantId: 'acme',
          keyName: 'acme-web',
          traceId: expect.stringMatching(/^[0-9a-f]{32}$/),
        }),
      ]);
      expect(lines.map((line) => line.msg)).toContain('SIGTERM received: finishing running turns…');
      for (const secret of [SECRETS.openAiKey, SECRETS.langfuseSecret, SECRETS.apiKey]) {
        expect(stdout).not.toContain(secret);
        expect(stderr).not.toContain(secret);
      }
    } finally {
      await receiver.close();
    }
  }, 15_000);

  it('refuses an unknown LOG_LEVEL at start-up, naming the levels', async () => {
    const server = startServer({ LOG_LEVEL: 'loud' });
    expect(await server.exited).toBe(1);
    expect(server.output().stderr).toContain(
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
    );
  });
});

describe('startupConfig', () => {
  it('shows the Redis and OpenAI URLs without their passwords and counts the API keys', () => {
    const config = readConfig({
      REDIS_URL: `redis://admin:${SECRETS.redisPassword}@10.0.0.9:6379/2`,
      OPENAI_API_KEY: SECRETS.openAiKey,
      OPENAI_BASE_URL: `https://proxy:${SECRETS.redisPassword}@llm.example.com/v1`,
      SWITCHBOARD_API_KEYS: JSON.stringify({
        [SECRETS.apiKey]: { tenantId: 'acme', name: 'web' },
        [`${SECRETS.apiKey}-2`]: { tenantId: 'acme', name: 'bot' },
      }),
    });
    const summary = startupConfig(config, []);
    expect(summary).toMatchObject({
      store: { redisUrl: 'redis://admin:***@10.0.0.9:6379/2', keyPrefix: 'switchboard:' },
      openai: { apiKey: 'set', baseURL: 'https://proxy:***@llm.example.com/v1' },
      auth: { apiKeys: 2, tenants: ['acme'] },
      tracing: 'off',
    });
    const text = JSON.stringify(summary);
    for (const secret of Object.values(SECRETS)) expect(text).not.toContain(secret);
  });
});
