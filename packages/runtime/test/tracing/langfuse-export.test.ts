import {
  AbstractOrchestrator,
  type Conversation,
  currentUserMessage,
  type Decision,
  latestToolResults,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import { App, type ServerHandle } from '../../src/app.js';
import { createOtlpReceiver, type OtlpReceiver } from '../../src/testing/otlp-receiver.js';
import type { OtlpSpan } from '../../src/testing/otlp-spans.js';
import { observe } from '../../src/tracing/observe.js';
import { setupTracing } from '../../src/tracing/setup-tracing.js';

const classify = observe((text: string) => (text.includes('plan') ? 'plan' : 'other'), { name: 'classify' });

/** Plans call alpha then beta then answer; `break` calls a failing agent; `both` fans out. */
class PlanningOrchestrator extends AbstractOrchestrator {
  protected handleMessage(conversation: Conversation): Decision {
    const text = currentUserMessage(conversation).content;
    const [first, second] = latestToolResults(conversation);
    if (classify(text) === 'plan') {
      if (conversation.hop === 0)
        return toolCall('alpha', 'research', { thought: 'need facts', reason: 'alpha researches' });
      if (conversation.hop === 1)
        return toolCall('beta', `summarise ${first?.content}`, { reason: 'beta summarises' });
      return routeToUser(first?.content ?? '', { reason: 'summary ready' });
    }
    if (text.includes('break')) {
      if (conversation.hop === 0) return toolCall('broken', 'try', { reason: 'only broken can' });
      return routeToUser(`Sorry, ${first?.name} failed`, { reason: 'agent error' });
    }
    if (conversation.hop === 0) return [toolCall('alpha', 'a'), toolCall('beta', 'b')];
    return routeToUser(`${first?.content} / ${second?.content}`);
  }
}

const agents = [
  defineAgent({ name: 'alpha', description: 'Researches', run: (message) => `facts about ${message}` }),
  defineAgent({ name: 'beta', description: 'Summarises', run: (message) => `summary of ${message}` }),
  defineAgent({
    name: 'broken',
    description: 'Always fails',
    run: () => {
      throw new Error('broken agent exploded');
    },
  }),
];

interface ChatResponse {
  sessionId: string;
  traceId?: string;
  reply: string;
  status: string;
}

describe('export to Langfuse', () => {
  let receiver: OtlpReceiver;
  let server: ServerHandle;
  const responses: ChatResponse[] = [];
  let spans: OtlpSpan[] = [];

  const chat = async (message: string, sessionId?: string): Promise<ChatResponse> => {
    const response = await fetch(`${server.url}/v1/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message, sessionId, userId: 'ada' }),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as ChatResponse;
  };
  const named = (name: string, traceId: string | undefined) =>
    spans.filter((span) => span.name === name && span.traceId === traceId);
  const one = (name: string, traceId: string | undefined): OtlpSpan => {
    const found = named(name, traceId);
    expect(found, `${name} in trace ${traceId}`).toHaveLength(1);
    return found[0]!;
  };

  beforeAll(async () => {
    receiver = await createOtlpReceiver();
    vi.stubEnv('LANGFUSE_PUBLIC_KEY', 'pk-lf-test');
    vi.stubEnv('LANGFUSE_SECRET_KEY', 'sk-lf-test');
    vi.stubEnv('LANGFUSE_BASE_URL', receiver.url);
    const tracing = setupTracing();
    expect(tracing.destinations).toEqual(['langfuse']);
    const app = new App({ name: 'support', agents, tracing, logLevel: 'silent' });
    server = await app.start(PlanningOrchestrator, { port: 0 });

    responses.push(await chat('make a plan'));
    const { sessionId } = responses[0]!;
    responses.push(await chat('break it', sessionId));
    responses.push(await chat('both please', sessionId));
    await tracing.forceFlush();
    spans = receiver.spans();
  });

  afterAll(async () => {
    await server?.close();
    await receiver?.close();
    vi.unstubAllEnvs();
  });

  it('posts OTLP (protobuf, the default) to /api/public/otel/v1/traces with Basic auth from the keys', () => {
    expect(receiver.requests.length).toBeGreaterThan(0);
    const basic = `Basic ${Buffer.from('pk-lf-test:sk-lf-test').toString('base64')}`;
    for (const request of receiver.requests) {
      expect(request.path).toBe('/api/public/otel/v1/traces');
      expect(request.headers.authorization).toBe(basic);
      expect(request.headers['content-type']).toBe('application/x-protobuf');
    }
  });

  it('sends one trace per turn, rooted at a span named after the orchestrator (the trace after the app and entry point), with the ids from the chat responses', () => {
    expect(responses.map((response) => response.status)).toEqual(['completed', 'completed', 'completed']);
    const traceIds = [...new Set(spans.map((span) => span.traceId))];
    expect(traceIds.sort()).toEqual(responses.map((response) => response.traceId).sort());
    for (const { traceId, reply, sessionId } of responses) {
      const roots = spans.filter((span) => span.traceId === traceId && span.parentSpanId === undefined);
      expect(roots.map((root) => root.name)).toEqual(['support']);
      expect(roots[0]?.attributes).toMatchObject({
        'langfuse.trace.name': 'support /v1/chat',
        'langfuse.observation.type': 'agent',
        'langfuse.trace.output': JSON.stringify(reply),
        'session.id': sessionId,
        'user.id': 'ada',
      });
    }
  });

  it('leaves no orphan and puts the session and user on every span', () => {
    const ids = new Set(spans.map((span) => span.spanId));
    const sessionId = responses[0]?.sessionId;
    for (const span of spans) {
      if (span.parentSpanId !== undefined) expect(ids, `parent of ${span.name}`).toContain(span.parentSpanId);
      expect(span.attributes['session.id'], span.name).toBe(sessionId);
      expect(span.attributes['user.id'], span.name).toBe('ada');
      expect(span.attributes, span.name).not.toHaveProperty('model');
    }
  });

  it('records each routing decision with candidates, choice, thought, reason and hop, nesting agents under it', () => {
    const traceId = responses[0]?.traceId;
    const turn = one('support', traceId);
    const [route0, route1, route2] = [
      one('route 0', traceId),
      one('route 1', traceId),
      one('route 2', traceId),
    ];
    for (const route of [route0, route1, route2]) expect(route.parentSpanId).toBe(turn.spanId);
    expect(route0.attributes).toMatchObject({
      'langfuse.observation.type': 'chain',
      'switchboard.orchestrator': 'support',
      'switchboard.candidates': ['alpha', 'beta', 'broken'],
      'switchboard.hop': 0,
      'switchboard.decision.kind': 'call',
      'switchboard.decision.agents': ['alpha'],
      'switchboard.decision.thought': 'need facts',
      'switchboard.decision.reason': 'alpha researches',
    });
    expect(route1.attributes).toMatchObject({
      'switchboard.hop': 1,
      'switchboard.decision.agents': ['beta'],
    });
    expect(route2.attributes).toMatchObject({
      'switchboard.decision.kind': 'answer',
      'switchboard.decision.reason': 'summary ready',
    });
    expect(one('agent alpha', traceId).parentSpanId).toBe(route0.spanId);
    expect(one('agent beta', traceId).parentSpanId).toBe(route1.spanId);
    expect(one('agent beta', traceId).attributes['langfuse.observation.output']).toBe(
      JSON.stringify('summary of summarise facts about research'),
    );
    // The orchestrator's own `observe`d helper runs once per decision, nested under that decision.
    const classified = named('classify', traceId);
    expect(classified.map((span) => span.scope)).toEqual([
      'switchboard.observe',
      'switchboard.observe',
      'switchboard.observe',
    ]);
    expect(classified.map((span) => span.parentSpanId).sort()).toEqual(
      [route0.spanId, route1.spanId, route2.spanId].sort(),
    );

    const fanOut = one('route 0', responses[2]?.traceId);
    expect(fanOut.attributes).toMatchObject({
      'switchboard.decision.kind': 'fan-out',
      'switchboard.decision.agents': ['alpha', 'beta'],
    });
  });

  it('marks the failed agent call as an error with the exception', () => {
    const failed = one('agent broken', responses[1]?.traceId);
    expect(failed.status).toEqual({ code: 2, message: expect.stringContaining('broken agent exploded') });
    expect(failed.attributes['langfuse.observation.level']).toBe('ERROR');
    expect(failed.events.map((event) => event.name)).toContain('exception');
    expect(one('support', responses[1]?.traceId).status.code).not.toBe(2);
  });
});
