import { currentUserMessage, latestToolResults, routeToUser, toolCall } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import { createApp } from '../support/app-fixtures.js';
import { useSpanRecording } from '../support/span-recording.js';

const refunds = defineAgent({
  name: 'refunds',
  description: 'Refunds an order',
  requiresApproval: () => ({ required: true, risk: 'high', reason: 'money leaves the company' }),
  run: (message) => `refunded: ${message}`,
});

describe('the trace of a turn that pauses for approval', () => {
  const recording = useSpanRecording();

  it('ends the first trace with the approval request; the resumed part is a new trace of the same session, linked to it, with the decision', async () => {
    const { app } = createApp({
      agents: [refunds],
      handler: (conversation) => {
        const [reply] = latestToolResults(conversation);
        if (reply) return routeToUser(reply.content);
        return toolCall('refunds', currentUserMessage(conversation).content);
      },
    });
    try {
      const paused = await app.chat({ message: 'refund order 7', sessionId: 'traced', userId: 'ada' });
      expect(paused.status).toBe('awaiting_approval');
      const approvalId = paused.approvals![0]!.id;
      const [firstPart] = recording().named('scripted');
      expect(firstPart).toBeDefined();
      // docs/guides/tracing-langfuse.md: a turn started by app.chat() is the trace `<app> app.chat()`; its resumed part `<app> approval`.
      const appName = app.name;
      expect(firstPart!.attributes['langfuse.trace.name']).toBe(`${appName} app.chat()`);
      expect(firstPart!.attributes).toMatchObject({
        'session.id': 'traced',
        'switchboard.turn.status': 'awaiting_approval',
        'langfuse.trace.output': expect.stringContaining(approvalId),
      });
      expect(paused.traceId).toBe(firstPart!.spanContext().traceId);

      const done = await app.resolveApproval({
        sessionId: 'traced',
        approvalId,
        decision: 'approve',
        comment: 'customer is right',
        userId: 'manager-1',
      });
      expect(done.status).toBe('completed');
      const parts = recording().named('scripted');
      expect(parts).toHaveLength(2);
      const resumed = parts[1]!;
      // A new trace (Langfuse: its own root), in the same session, pointing back at the paused part.
      expect(resumed.spanContext().traceId).not.toBe(firstPart!.spanContext().traceId);
      expect(resumed.parentSpanContext).toBeUndefined();
      expect(done.traceId).toBe(resumed.spanContext().traceId);
      expect(resumed.links.map((link) => link.context.traceId)).toContain(firstPart!.spanContext().traceId);
      expect(resumed.attributes['langfuse.trace.name']).toBe(`${appName} approval`);
      expect(resumed.attributes).toMatchObject({
        'session.id': 'traced',
        'switchboard.turn.resumed': 'approval',
        'switchboard.turn.previous_traces': [firstPart!.spanContext().traceId],
        'switchboard.approval.ids': approvalId,
        'switchboard.approval.decisions': 'approved',
        'switchboard.approval.decided_by': 'manager-1',
        'switchboard.approval.comments': JSON.stringify(['customer is right']),
        'switchboard.turn.status': 'completed',
      });
      // The agent ran in the resumed part: its span belongs to the new trace.
      const [agentSpan] = recording().named('agent refunds');
      expect(agentSpan!.spanContext().traceId).toBe(resumed.spanContext().traceId);

      // The stored turn keeps both parts.
      const [turn] = await app.sessions.listTurns('traced');
      expect(turn!.traces?.map((part) => part.traceId)).toEqual([
        firstPart!.spanContext().traceId,
        resumed.spanContext().traceId,
      ]);
    } finally {
      await app.close();
    }
  });
});
