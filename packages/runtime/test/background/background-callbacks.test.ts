import { afterAll, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import { generateCallbackSecret, verifyCallback } from '../../src/callbacks/index.js';
import { startReceiver } from '../callbacks/receiver.js';
import { createApp, postJson, sleep } from '../support/app-fixtures.js';

const receiver = await startReceiver();
afterAll(() => receiver.close());

const refund = defineAgent({
  name: 'refund',
  description: 'Refunds; above 100 a person approves first',
  requiresApproval: (call) =>
    Number(/\d+/.exec(call.message)?.[0] ?? 0) > 100 ? { required: true, risk: 'high' } : false,
  run: (message) => `refunded: ${message}`,
});

async function until(done: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 500 && !done(); attempt += 1) await sleep(10);
  expect(done()).toBe(true);
}

describe('callbacks of background turns', () => {
  it('POSTs the pause and then the end of a turn, signed, each with its own delivery id', async () => {
    const secret = generateCallbackSecret();
    const { app } = createApp({
      agents: [refund],
      handler: undefined,
      background: { callbacks: { secret, allowedHosts: ['127.0.0.1'], retryDelayMs: 5 } },
    });
    let calls = 0;
    const hook = receiver.route('/turns', (response) => {
      calls += 1;
      // The first delivery fails once: it is retried with the same id.
      response.writeHead(calls === 1 ? 503 : 204).end();
    });
    const queued = await app.request(
      '/v1/chat',
      postJson({ message: 'refund: 250', background: true, callbackUrl: hook }),
    );
    expect(queued.status).toBe(202);
    await until(() => receiver.received('/turns').length >= 2);
    const paused = receiver.received('/turns');
    expect(paused[0]?.headers['webhook-id']).toBe(paused[1]?.headers['webhook-id']);
    const pause = JSON.parse(paused[1]?.body ?? '{}') as {
      type: string;
      data: { status: string; sessionId: string; approvals: Array<{ id: string }> };
    };
    expect(pause.type).toBe('turn.awaiting_approval');
    expect(
      verifyCallback({ headers: paused[1]!.headers as never, body: paused[1]!.body, secret }).valid,
    ).toBe(true);
    const { sessionId, approvals } = pause.data;
    const decided = await app.request(
      `/v1/sessions/${sessionId}/approvals/${approvals[0]?.id}`,
      postJson({ decision: 'approve' }),
    );
    expect(decided.status).toBe(200);
    await until(() => receiver.received('/turns').length >= 3);
    const end = receiver.received('/turns')[2]!;
    const body = JSON.parse(end.body) as { type: string; data: { reply: string } };
    expect(body.type).toBe('turn.completed');
    expect(body.data.reply).toContain('refunded');
    expect(end.headers['webhook-id']).not.toBe(paused[0]?.headers['webhook-id']);
    expect(
      verifyCallback({ headers: end.headers as never, body: end.body, secret: generateCallbackSecret() })
        .valid,
    ).toBe(false);
    await app.close();
  });

  it('refuses a callbackUrl outside the allowed hosts with 400, queueing nothing', async () => {
    const { app } = createApp({
      agents: [refund],
      background: { callbacks: { secret: generateCallbackSecret(), allowedHosts: ['127.0.0.1'] } },
    });
    for (const url of ['http://10.0.0.1/hook', 'ftp://127.0.0.1/hook', 'http://user:pw@127.0.0.1/hook']) {
      const response = await app.request(
        '/v1/chat',
        postJson({ message: 'refund: 5', background: true, callbackUrl: url }),
      );
      expect(response.status).toBe(400);
    }
    expect(await (await app.request('/v1/background-turns')).json()).toEqual({ data: [] });
    await app.close();
  });
});
