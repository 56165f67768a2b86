import { latestToolResults, routeToUser, toolCall } from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import type { TurnEvent } from '../../src/engine/events.js';
import { createApp, echoAgent } from '../support/app-fixtures.js';

describe('an answer that waits for a person before the user sees it', () => {
  let app: App | undefined;
  afterEach(() => app?.close());

  const reviewed = () =>
    createApp({
      agents: [echoAgent()],
      handler: (conversation) => {
        const [reply] = latestToolResults(conversation);
        if (!reply) return toolCall('echo', 'refund 500 EUR');
        return routeToUser(`Refund sent: ${reply.content}`, {
          requiresApproval: true,
          reason: 'a large refund',
        });
      },
    }).app;

  it('pauses with the answer on the approval, and delivers it once approved', async () => {
    app = reviewed();
    const events: TurnEvent[] = [];
    const paused = await app.chat({
      sessionId: 'a',
      message: 'refund me',
      onEvent: (event) => events.push(event),
    });
    expect(paused.status).toBe('awaiting_approval');
    expect(paused.approvals).toMatchObject([
      {
        agent: 'route_to_user',
        message: 'Refund sent: echo: refund 500 EUR',
        reason: 'a large refund',
        status: 'pending',
      },
    ]);
    // Nobody has read the answer yet: no message event, none stored.
    expect(events.some((event) => event.type === 'message')).toBe(false);
    expect(events.find((event) => event.type === 'approval-request')).toMatchObject({
      agent: 'route_to_user',
    });
    expect((await app.sessions.read('a')).some((message) => message.role === 'assistant')).toBe(false);

    const approvalId = paused.approvals?.[0]?.id as string;
    const done = await app.resolveApproval({ sessionId: 'a', approvalId, decision: 'approve' });
    expect(done).toMatchObject({ status: 'completed', reply: 'Refund sent: echo: refund 500 EUR' });
    expect((await app.sessions.read('a')).at(-1)).toMatchObject({
      role: 'assistant',
      content: 'Refund sent: echo: refund 500 EUR',
    });
  });

  it('ends with the rejection, and the reviewer’s comment, when a person rejects it', async () => {
    app = reviewed();
    const paused = await app.chat({ sessionId: 'b', message: 'refund me' });
    const approvalId = paused.approvals?.[0]?.id as string;
    const done = await app.resolveApproval({
      sessionId: 'b',
      approvalId,
      decision: 'reject',
      comment: 'over the limit',
    });
    expect(done).toMatchObject({
      status: 'completed',
      reply: 'The answer to this request was not approved. (over the limit)',
    });
    expect(JSON.stringify(await app.sessions.read('b'))).not.toContain('Refund sent');
  });
});
