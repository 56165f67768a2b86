import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { currentUserMessage, latestToolResults, routeToUser, toolCall } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import { createApp, echoAgent, fanOut, relay, slowAgent } from '../support/app-fixtures.js';
import { useSpanRecording } from '../support/span-recording.js';

/** Nanoseconds since the epoch of an OpenTelemetry time. */
const ns = ([seconds, nanos]: [number, number]) => BigInt(seconds) * 1_000_000_000n + BigInt(nanos);

/** The spans that start before their recorded parent or end after it, by even one nanosecond. */
function outsideTheirParent(
  spans: readonly ReadableSpan[],
  parentOf: (span: ReadableSpan) => ReadableSpan | undefined,
) {
  return spans.flatMap((span) => {
    const parent = parentOf(span);
    if (!parent) return [];
    const early = ns(parent.startTime) - ns(span.startTime);
    const late = ns(span.endTime) - ns(parent.endTime);
    return early > 0n || late > 0n
      ? [`${span.name} outside ${parent.name} (starts ${early} ns before, ends ${late} ns after)`]
      : [];
  });
}

const refunds = defineAgent({
  name: 'refunds',
  description: 'Refunds an order',
  requiresApproval: () => ({ required: true, risk: 'high', reason: 'money leaves the company' }),
  run: (message) => `refunded: ${message}`,
});

describe('span intervals: every child lies inside its parent to the nanosecond, as Langfuse needs to nest it', () => {
  const recording = useSpanRecording();

  it('in a multi-hop turn and in a fan-out', async () => {
    const { app } = createApp({ agents: [slowAgent('echo', 5)], handler: relay() });
    await app.chat({ message: 'one' });
    await app.close();
    const fan = createApp({
      agents: [slowAgent('maps', 10), slowAgent('weather', 20)],
      handler: fanOut(['maps', 'weather']),
    }).app;
    await fan.chat({ message: 'hike' });
    await fan.close();

    const { spans, parentOf } = recording();
    const agents = spans.filter((span) => span.name.startsWith('agent '));
    expect(agents.map((span) => span.name).sort()).toEqual(['agent echo', 'agent maps', 'agent weather']);
    // Each agent call hangs under the decision that made it.
    for (const agent of agents) expect(parentOf(agent)?.name).toMatch(/^route \d+$/);
    expect(outsideTheirParent(spans, parentOf)).toEqual([]);
    // Start times keep their sub-millisecond part: not all on a whole millisecond.
    expect(spans.some((span) => span.startTime[1] % 1_000_000 !== 0)).toBe(true);
    // The decision's own time stays visible beside its span's.
    const decisions = spans.filter((span) => span.name.startsWith('route '));
    expect(
      decisions.every((span) => typeof span.attributes['switchboard.decision.duration_ms'] === 'number'),
    ).toBe(true);
  });

  it('in a turn resumed by an approval, which stays the requester’s: the approver is an attribute of the decision', async () => {
    const { app } = createApp({
      agents: [refunds],
      handler: (conversation) => {
        const [reply] = latestToolResults(conversation);
        if (reply) return routeToUser(reply.content);
        return toolCall('refunds', currentUserMessage(conversation).content);
      },
    });
    try {
      const paused = await app.chat({ message: 'refund order 7', sessionId: 'nested', userId: 'ada' });
      const approvalId = paused.approvals?.[0]?.id as string;
      const done = await app.resolveApproval({
        sessionId: 'nested',
        approvalId,
        decision: 'approve',
        userId: 'manager-1',
      });
      expect(done.status).toBe('completed');
    } finally {
      await app.close();
    }
    const { spans, parentOf } = recording();
    const resumedTrace = done(spans);
    expect(resumedTrace.length).toBeGreaterThanOrEqual(3);
    expect(outsideTheirParent(spans, parentOf)).toEqual([]);
    // Every observation of the resumed trace is the customer's, so Langfuse's Users view keeps the turn whole.
    expect(new Set(resumedTrace.map((span) => span.attributes['user.id']))).toEqual(new Set(['ada']));
    const root = resumedTrace.find((span) => span.attributes['switchboard.turn.resumed'] === 'approval');
    expect(root?.attributes['switchboard.approval.decided_by']).toBe('manager-1');
  });

  it('over 1,000 traced turns, no child outside its parent', async () => {
    const { app } = createApp({ agents: [echoAgent(), echoAgent('other')], handler: relay() });
    try {
      for (let index = 0; index < 1_000; index++) {
        const result = await app.chat({ message: `${index % 2 ? 'echo' : 'other'}: turn ${index}` });
        expect(result.status).toBe('completed');
      }
    } finally {
      await app.close();
    }
    const { spans, parentOf } = recording();
    const children = spans.filter((span) => parentOf(span) !== undefined);
    // Each turn: its span, two decisions, one agent call.
    expect(children.length).toBeGreaterThanOrEqual(3_000);
    expect(outsideTheirParent(spans, parentOf)).toEqual([]);
  });
});

/** The spans of the trace resumed after the approval (the one whose root says so). */
function done(spans: readonly ReadableSpan[]): ReadableSpan[] {
  const root = spans.find((span) => span.attributes['switchboard.turn.resumed'] === 'approval');
  const traceId = root?.spanContext().traceId;
  return spans.filter((span) => span.spanContext().traceId === traceId);
}
