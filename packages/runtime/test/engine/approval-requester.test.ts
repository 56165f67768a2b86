import {
  currentUserMessage,
  latestToolResults,
  RequestContext,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import { createApp } from '../support/app-fixtures.js';
import { useSpanRecording } from '../support/span-recording.js';

/**
 * A turn an approver resumes is still the requester's: docs/guides/human-approval.md and
 * docs/guides/tracing-langfuse.md ("What appears where in Langfuse").
 */
describe('a turn resumed by an approver runs as the user who sent the message', () => {
  const recording = useSpanRecording();

  it('its agents, orchestrator, memory, approval rules and spans see the requester; the approver is on the decision', async () => {
    const seen: Array<[string, string | undefined]> = [];
    const refunds = defineAgent({
      name: 'refunds',
      description: 'Refunds an order',
      // A customer under review needs a person for every refund, whoever approved the last one.
      requiresApproval: (_call, context) => context.userId === 'ada',
      run: async (message, context) => {
        seen.push(['agent', context.request.userId], ['agent current()', RequestContext.current().userId]);
        const memory = context.request.getMemory('user');
        const count = await memory.updateContent('refunds', (value: number) => value + 1, 0);
        return `refunded ${message} (refund ${count.success ? count.data : '?'} for this user)`;
      },
    });
    const { app } = createApp({
      agents: [refunds],
      handler: (conversation) => {
        seen.push(['orchestrator', RequestContext.current().userId]);
        const replies = latestToolResults(conversation);
        const done = conversation.messages.filter((message) => message.role === 'tool').length;
        if (done >= 2) return routeToUser(replies[0]!.content);
        return toolCall('refunds', `${currentUserMessage(conversation).content} #${done + 1}`);
      },
    });
    try {
      const paused = await app.chat({ message: 'order 7', sessionId: 'requester', userId: 'ada' });
      expect(paused.status).toBe('awaiting_approval');
      seen.length = 0;
      const approve = (result: typeof paused, userId: string) =>
        app.resolveApproval({
          sessionId: 'requester',
          approvalId: result.approvals![0]!.id,
          decision: 'approve',
          userId,
        });
      const next = await approve(paused, 'manager-1');
      // The second refund is still ada's: her rule asks a person again.
      expect(next.status).toBe('awaiting_approval');
      const done = await approve(next, 'manager-2');
      expect(done.status).toBe('completed');
      expect(done.reply).toBe('refunded order 7 #2 (refund 2 for this user)');
      expect(new Set(seen.map(([, user]) => user))).toEqual(new Set(['ada']));
      expect(seen.filter(([who]) => who === 'agent')).toHaveLength(2);

      // In the trace: every span of every part names ada; each resumed root names the approvers so far.
      const { spans } = recording();
      expect(new Set(spans.map((span) => span.attributes['user.id']))).toEqual(new Set(['ada']));
      const roots = spans.filter((span) => span.attributes['switchboard.turn.resumed'] === 'approval');
      expect(roots.map((span) => span.attributes['switchboard.approval.decided_by'])).toEqual([
        'manager-1',
        'manager-1,manager-2',
      ]);
      // The stored approvals keep who decided and for whom.
      const [turn] = await app.sessions.listTurns('requester');
      expect(turn!.approvals?.map((approval) => [approval.decidedBy, approval.requestedFor])).toEqual([
        ['manager-1', 'ada'],
        ['manager-2', 'ada'],
      ]);
    } finally {
      await app.close();
    }
  });
});
