import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { App } from '@switchboard/runtime';
import { recordSpans, type SpanRecording } from '@switchboard/runtime/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { CUSTOMERS } from '../src/customers.js';

const INPUT = 'langfuse.observation.input';
const OUTPUT = 'langfuse.observation.output';

describe('traced orchestrator example', () => {
  let recording: SpanRecording;
  let app: App;

  beforeAll(() => {
    recording = recordSpans();
    const built = buildApp({ logLevel: 'silent' });
    app = built.app.mount(built.orchestrator);
  });
  afterEach(() => recording.reset());
  afterAll(async () => {
    await app.close();
    await recording.shutdown();
  });

  const chat = async (message: string, userId: string) => {
    const response = await app.request('/v1/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message, userId, sessionId: `ses-${userId}` }),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as { reply: string; traceId: string };
  };
  const only = (name: string): ReadableSpan => {
    const spans = recording.named(name);
    expect(spans, `spans named ${name}`).toHaveLength(1);
    return spans[0]!;
  };

  it('nests the observed method and helper under the routing decision of the turn', async () => {
    const message = 'I was charged twice, please refund me';
    const { reply, traceId } = await chat(message, 'ada');
    expect(reply).toBe(
      'Billing: I opened a ticket about your payment; a specialist will reply within the hour (priority queue).',
    );

    const turn = only('support');
    const decision = only('route 0');
    const select = only('select-agent');
    const score = only('score-agents');
    expect(turn.parentSpanContext).toBeUndefined();
    expect(recording.parentOf(decision)).toBe(turn);
    expect(recording.parentOf(select)).toBe(decision);
    expect(recording.parentOf(score)).toBe(select);
    for (const span of [turn, decision, select, score]) expect(span.spanContext().traceId).toBe(traceId);

    expect(select.instrumentationScope.name).toBe('switchboard.observe');
    expect(select.attributes[INPUT]).toBe(JSON.stringify(message));
    expect(select.attributes[OUTPUT]).toBe('"billing"');
    expect(select.attributes['session.id']).toBe('ses-ada');
    expect(select.attributes['user.id']).toBe('ada');
    expect(JSON.parse(String(score.attributes[OUTPUT]))).toMatchObject({
      best: 'billing',
      scores: [
        { agent: 'billing', score: 2, matched: ['refund', 'charged'] },
        { agent: 'tech-support', score: 0 },
      ],
    });
    expect(decision.attributes['switchboard.decision.agents']).toEqual(['billing']);
  });

  it('keeps the customer record of the sensitive method out of the trace', async () => {
    const { reply } = await chat('the app crashes with an error after login', 'grace');
    expect(reply).toBe(
      'Tech support: I opened a ticket about the problem; a specialist will reply within the hour (priority queue).',
    );

    const entitlement = only('check-entitlement');
    expect(recording.parentOf(entitlement)).toBe(only('route 0'));
    expect(entitlement.attributes).not.toHaveProperty(INPUT);
    expect(entitlement.attributes[OUTPUT]).toBe('"priority"');
    const everything = JSON.stringify(recording.spans.map((span) => span.attributes));
    for (const customer of CUSTOMERS) expect(everything).not.toContain(customer.email);
  });

  it('traces a turn without an agent call too: the decision answers the user', async () => {
    const { reply } = await chat('hello?', 'linus');
    expect(reply).toMatch(/^I can help with billing/);
    expect(only('select-agent').attributes[OUTPUT]).toBeUndefined();
    expect(recording.named('check-entitlement')).toHaveLength(0);
    expect(only('route 0').attributes['switchboard.decision.kind']).toBe('answer');
  });
});
