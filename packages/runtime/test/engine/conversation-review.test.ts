import type { MessageItem } from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import type { ConversationReview } from '../../src/guardrails/guardrail.js';
import { createApp, echoAgent, relay } from '../support/app-fixtures.js';

describe('periodic conversation reviews', () => {
  let app: App | undefined;
  afterEach(() => app?.close());

  function reviewing(review: ConversationReview['review']) {
    const runs: number[] = [];
    const compliance: ConversationReview = {
      name: 'compliance',
      every: 4,
      review: (messages, context) => {
        runs.push(messages.length);
        return review(messages, context);
      },
    };
    return { compliance, runs };
  }

  const mentions = (messages: readonly MessageItem[], text: string) =>
    messages.some((message) => message.content.includes(text));

  it('runs every N messages, records a warning, and makes the answer wait for a person on escalation', async () => {
    const { compliance, runs } = reviewing((messages) => {
      if (mentions(messages, 'wire money')) return { verdict: 'escalate', reason: 'a payment request' };
      if (mentions(messages, 'password')) return { verdict: 'warn', reason: 'credentials mentioned' };
      return { verdict: 'pass' };
    });
    app = createApp({ agents: [echoAgent()], handler: relay(), reviews: [compliance] }).app;
    const chat = (message: string) => app!.chat({ sessionId: 'reviewed', message });

    expect((await chat('hello')).status).toBe('completed');
    // Each turn stores 3 messages (question, agent reply, answer): the review runs once 4 came since the last.
    const second = await chat('my password is in the drawer');
    expect(runs).toEqual([4]);
    expect(second.status).toBe('completed');
    expect(second.steps[0]).toMatchObject({
      kind: 'note',
      label: 'review',
      annotations: { review: 'compliance', verdict: 'warn', reason: 'credentials mentioned' },
    });
    expect((await chat('thanks')).steps.some((step) => step.label === 'review')).toBe(false);
    const fourth = await chat('please wire money to this account');
    // It reads the recent conversation (the history window), not only what came since.
    expect(runs).toEqual([4, 10]);
    expect(fourth.status).toBe('awaiting_approval');
    expect(fourth.approvals).toMatchObject([
      { agent: 'route_to_user', reason: "review 'compliance': a payment request" },
    ]);
    const done = await app.resolveApproval({
      sessionId: 'reviewed',
      approvalId: fourth.approvals?.[0]?.id as string,
      decision: 'approve',
    });
    expect(done).toMatchObject({ status: 'completed', reply: 'echo: please wire money to this account' });
  });

  it('does not hold up the conversation when the review itself fails', async () => {
    const { compliance } = reviewing(() => {
      throw new Error('moderation service down');
    });
    app = createApp({ agents: [echoAgent()], handler: relay(), reviews: [{ ...compliance, every: 1 }] }).app;
    const result = await app.chat({ message: 'hi' });
    expect(result.status).toBe('completed');
    expect(result.steps[0]?.annotations).toMatchObject({
      verdict: 'warn',
      reason: 'the review failed (Error)',
    });
  });
});
