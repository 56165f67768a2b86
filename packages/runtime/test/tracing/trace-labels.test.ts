import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createOtlpReceiver, type OtlpReceiver } from '../../src/testing/otlp-receiver.js';
import type { OtlpSpan } from '../../src/testing/otlp-spans.js';
import { setupTracing } from '../../src/tracing/setup-tracing.js';
import { buildApp, type DecisionHandler, fanOut, relay, slowAgent } from '../support/app-fixtures.js';

/** The SDK anchors each span's clock when it starts: two spans may disagree by about a millisecond. */
const CLOCK_SLACK_NS = 2_000_000n;

/** The spans that start before their parent or end after it, as Langfuse would see them. */
function outsideTheirParent(spans: readonly OtlpSpan[]): string[] {
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  return spans.flatMap((span) => {
    const parent = span.parentSpanId === undefined ? undefined : byId.get(span.parentSpanId);
    if (!parent) return [];
    const early = BigInt(parent.startTimeUnixNano) - BigInt(span.startTimeUnixNano);
    const late = BigInt(span.endTimeUnixNano) - BigInt(parent.endTimeUnixNano);
    return early > CLOCK_SLACK_NS || late > CLOCK_SLACK_NS ? [`${span.name} outside ${parent.name}`] : [];
  });
}

/** Fans out to maps and weather when the message says so, else relays (two agents in a row for `chain:`). */
const handler: DecisionHandler = (conversation) => {
  const text = conversation.messages.find((message) => message.role === 'user')?.content ?? '';
  if (text.startsWith('plan')) return fanOut(['maps', 'weather'])(conversation);
  return relay({ defaultAgent: 'maps' })(conversation);
};

interface ChatResponse {
  sessionId: string;
  traceId?: string;
  status: string;
}

describe('trace labels: name, tags, release and environment, as Langfuse reads them', () => {
  let receiver: OtlpReceiver;
  let spans: OtlpSpan[] = [];
  let close: () => Promise<void>;
  const turns: Record<string, ChatResponse> = {};

  beforeAll(async () => {
    receiver = await createOtlpReceiver();
    vi.stubEnv('LANGFUSE_PUBLIC_KEY', 'pk-lf-test');
    vi.stubEnv('LANGFUSE_SECRET_KEY', 'sk-lf-test');
    vi.stubEnv('LANGFUSE_BASE_URL', receiver.url);
    vi.stubEnv('LANGFUSE_RELEASE', 'v1.4.2');
    const tracing = setupTracing({ environment: 'staging' });
    const { app, orchestrator } = buildApp({
      name: 'desk',
      agents: [slowAgent('maps', 5), slowAgent('weather', 10)],
      handler,
      tracing,
      traceTags: ['team-a'],
    });
    const server = await app.start(orchestrator, { port: 0 });
    close = () => server.close();
    const post = async (path: string, body: unknown) => {
      const response = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(response.status, await response.clone().text()).toBe(200);
      return response;
    };
    turns.multiHop = (await (
      await post('/v1/chat', { message: 'weather: is it sunny?', userId: 'ada' })
    ).json()) as ChatResponse;
    turns.fanOut = (await (
      await post('/v1/chat', {
        message: 'plan a hike',
        userId: 'ada',
        metadata: { traceName: 'hike planner', tags: ['beta', 'hike'] },
      })
    ).json()) as ChatResponse;
    const completion = await post('/v1/chat/completions', {
      model: 'scripted',
      messages: [{ role: 'user', content: 'plan a picnic' }],
      user: 'bob',
      metadata: { trace_name: 'picnic', tags: 'beta, picnic' },
    });
    const body = (await completion.json()) as { switchboard: { traceId: string; sessionId: string } };
    turns.openai = { ...body.switchboard, status: 'completed' };
    await tracing.forceFlush();
    spans = receiver.spans();
  });

  afterAll(async () => {
    await close?.();
    await receiver?.close();
    vi.unstubAllEnvs();
  });

  const rootOf = (turn: ChatResponse | undefined) => {
    const roots = spans.filter((span) => span.traceId === turn?.traceId && span.parentSpanId === undefined);
    expect(roots).toHaveLength(1);
    return roots[0]!;
  };

  it('keeps every span of a multi-hop and of a fan-out turn inside its parent, with no extra roots', () => {
    expect(spans.length).toBeGreaterThan(8);
    for (const turn of Object.values(turns)) rootOf(turn);
    expect(outsideTheirParent(spans)).toEqual([]);
    const fanOutAgents = spans.filter(
      (span) => span.traceId === turns.fanOut?.traceId && span.name.startsWith('agent '),
    );
    expect(fanOutAgents.map((span) => span.name).sort()).toEqual(['agent maps', 'agent weather']);
  });

  it('names each trace after the app and its entry point, unless the request names it', () => {
    expect(rootOf(turns.multiHop).attributes['langfuse.trace.name']).toBe('desk /v1/chat');
    expect(rootOf(turns.fanOut).attributes['langfuse.trace.name']).toBe('hike planner');
    expect(rootOf(turns.openai).attributes['langfuse.trace.name']).toBe('picnic');
    // The observation keeps the orchestrator's name.
    expect(rootOf(turns.multiHop).name).toBe('scripted');
  });

  it('tags each trace with the app, the orchestrator, the agents called and the request tags', () => {
    expect(rootOf(turns.multiHop).attributes['langfuse.trace.tags']).toEqual([
      'app:desk',
      'orchestrator:scripted',
      'team-a',
      'agent:weather',
    ]);
    expect(rootOf(turns.fanOut).attributes['langfuse.trace.tags']).toEqual([
      'app:desk',
      'orchestrator:scripted',
      'team-a',
      'agent:maps',
      'agent:weather',
      'beta',
      'hike',
    ]);
    expect(rootOf(turns.openai).attributes['langfuse.trace.tags']).toEqual(
      expect.arrayContaining(['app:desk', 'agent:maps', 'agent:weather', 'beta', 'picnic']),
    );
  });

  it('carries release and environment on every span and on the resource', () => {
    for (const span of spans) {
      expect(span.attributes['langfuse.release'], span.name).toBe('v1.4.2');
      expect(span.attributes['langfuse.environment'], span.name).toBe('staging');
      expect(span.resource).toMatchObject({
        'langfuse.release': 'v1.4.2',
        'service.version': 'v1.4.2',
        'deployment.environment.name': 'staging',
      });
    }
  });

  it('puts the session and the user on every observation', () => {
    for (const turn of Object.values(turns)) {
      const inTrace = spans.filter((span) => span.traceId === turn.traceId);
      const user = turn === turns.openai ? 'bob' : 'ada';
      for (const span of inTrace) {
        expect(span.attributes['session.id'], span.name).toBe(turn.sessionId);
        expect(span.attributes['user.id'], span.name).toBe(user);
      }
    }
  });

  it('keeps usage off the invoke_agent turn span, which Langfuse reads no usage from, and keeps it an agent', () => {
    const root = rootOf(turns.multiHop);
    expect(root.attributes['langfuse.observation.type']).toBe('agent');
    const usageKeys = Object.keys(root.attributes).filter((key) => /usage|model/.test(key));
    expect(usageKeys).toEqual([]);
  });
});

describe('trace labels a request cannot set', () => {
  it('refuses a bad traceName or tags with 400 and stores nothing', async () => {
    const { app, orchestrator } = buildApp({ agents: [slowAgent('maps', 1)] });
    app.mount(orchestrator);
    for (const metadata of [
      { traceName: '' },
      { traceName: 'x'.repeat(201) },
      { tags: ['a'.repeat(65)] },
      { tags: Array.from({ length: 11 }, (_, index) => `t${index}`) },
      { tags: [1] },
    ]) {
      const response = await app.request('/v1/chat', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'hi', sessionId: 'ses_labels', metadata }),
      });
      expect(response.status, JSON.stringify(metadata)).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
        /metadata\.(traceName|tags)/,
      );
    }
    const history = await app.request('/v1/sessions/ses_labels');
    expect(history.status).toBe(404);
    await app.close();
  });
});
