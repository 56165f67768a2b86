import {
  AbstractOrchestrator,
  type AgentMeta,
  type Conversation,
  currentUserMessage,
  type Decision,
  latestToolResults,
  type MessageItem,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import { App, defineAgent, type TurnResult } from '@switchboard/runtime';
import {
  createScriptedModelServer,
  type ScriptEntry,
  type ScriptedModelServer,
} from '@switchboard/runtime/testing';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type CriticOptions, withCritic } from '../src/critic.js';
import type { CriticJudgeOptions } from '../src/critic-judge.js';
import { isCriticFeedback } from '../src/critic-state.js';
import { RecordingTracer } from './llm-recording-tracer.js';

const writer: AgentMeta = { name: 'writer', description: 'Writes texts' };

/** Asks the writer, answers `answer from <reply>`; shown the critic's feedback, answers `revised: <reply>`. */
class Drafter extends AbstractOrchestrator {
  readonly feedback: string[] = [];
  constructor() {
    super({ name: 'drafter', agents: [writer] });
  }
  protected handleMessage(conversation: Conversation): Decision {
    const [latest] = latestToolResults(conversation);
    if (!latest) return toolCall('writer', currentUserMessage(conversation).content);
    if (!isCriticFeedback(latest)) return routeToUser(`answer from ${latest.content}`);
    this.feedback.push(latest.content);
    const reply = conversation.messages.findLast(
      (message) => message.role === 'tool' && !isCriticFeedback(message),
    );
    return routeToUser(`revised: ${reply?.content}`);
  }
}

const verdict = (
  score: number,
  issues: string[] = [],
  extra: { rewrite?: string; escalate?: boolean } = {},
) => ({
  content: JSON.stringify({ score, issues, rewrite: extra.rewrite ?? '', escalate: extra.escalate ?? false }),
  usage: { inputTokens: 40, outputTokens: 12 },
});

const tracer = new RecordingTracer();
beforeAll(() => tracer.register());
afterAll(() => tracer.unregister());

let server: ScriptedModelServer | undefined;
const openApps: App[] = [];
afterEach(async () => {
  await Promise.all(openApps.splice(0).map((app) => app.close()));
  await server?.close();
  server = undefined;
});

async function judged(
  script: ScriptEntry[],
  judge: Partial<CriticJudgeOptions> = {},
  options: CriticOptions = {},
) {
  server = await createScriptedModelServer({ script });
  const inner = new Drafter();
  const client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
  const app = new App({
    name: 'judged',
    agents: [defineAgent({ ...writer, run: (message) => `reply to "${message}"` })],
    logLevel: 'silent',
  }).mount(withCritic(inner, { model: 'judge-model', client, ...judge }, options));
  openApps.push(app);
  return { app, inner, server };
}

const notes = (result: TurnResult) =>
  result.steps.filter((step) => step.kind === 'note').map((step) => step.annotations?.critic);

function postJson(body: unknown): RequestInit {
  return { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

describe('withCritic with a model as judge', () => {
  it('sends a low-scored answer back with the judge’s issues, then passes the revision', async () => {
    const { app, inner, server } = await judged([verdict(0.3, ['does not say who wrote it']), verdict(0.85)]);
    tracer.spans.length = 0;
    const result = await app.chat({ message: 'hello' });

    expect(result).toMatchObject({ status: 'completed', reply: 'revised: reply to "hello"' });
    expect(inner.feedback).toHaveLength(1);
    expect(inner.feedback[0]).toContain('does not say who wrote it');
    expect(notes(result)).toMatchObject([
      { verdict: 'retry', score: 0.3, issues: ['does not say who wrote it'], attempt: 0 },
      { verdict: 'pass', score: 0.85, attempt: 1 },
    ]);

    // The judge read the request, the agent's reply and the answer, with a strict schema.
    const [first, second] = server.requests.map((request) => request.body);
    expect(first?.model).toBe('judge-model');
    expect(first?.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'critic_verdict', strict: true },
    });
    expect(String(first?.messages[0]?.content)).toContain(
      'You review the answer an assistant is about to give',
    );
    const reviewed = String(first?.messages[1]?.content);
    expect(reviewed).toContain("The user's request:\nhello");
    expect(reviewed).toContain('[Agent "writer" replied]\nreply to "hello"');
    expect(reviewed).toContain('The answer to review:\nanswer from reply to "hello"');
    expect(String(second?.messages[1]?.content)).toContain(
      'The answer to review:\nrevised: reply to "hello"',
    );
    // The critic's own feedback is not shown to the judge as an agent reply.
    expect(String(second?.messages[1]?.content)).not.toContain('critic');

    // The judge's tokens count on the decision that answered.
    expect(result.steps.at(-1)?.usage).toEqual({ inputTokens: 80, outputTokens: 24 });
    // Each model call is a generation under its review, each review under the decision.
    const decision = tracer.spans.find((span) => span.name === 'route 1');
    const reviews = tracer.spans.filter((span) => span.name === 'review');
    const generations = tracer.spans.filter((span) => span.name === 'chat judge-model');
    expect(reviews.map((span) => span.parentSpanId)).toEqual([decision?.spanId, decision?.spanId]);
    expect(generations.map((span) => span.parentSpanId)).toEqual(reviews.map((span) => span.spanId));
    expect(reviews.map((span) => span.attributes['switchboard.critic.score'])).toEqual([0.3, 0.85]);
    expect(reviews[0]?.attributes['switchboard.critic.kind']).toBe('model');
    server.assertDone();
  });

  it('delivers the judge’s rewrite', async () => {
    const { app, server } = await judged([
      verdict(0.6, ['stiff'], { rewrite: 'Hello! The writer says hi.' }),
    ]);
    const result = await app.chat({ message: 'hello' });
    expect(result.reply).toBe('Hello! The writer says hi.');
    expect(notes(result)).toMatchObject([{ verdict: 'rewrite', answer: 'answer from reply to "hello"' }]);
    server.assertDone();
  });

  it('retries an invalid verdict with feedback, then lets the answer pass and records why', async () => {
    const { app, server } = await judged(['not json', verdict(3)], {
      instructions: 'Only check the spelling.',
    });
    const result = await app.chat({ message: 'hello' });

    expect(result).toMatchObject({ status: 'completed', reply: 'answer from reply to "hello"' });
    expect(String(server.requests[0]?.body.messages[0]?.content)).toMatch(/^Only check the spelling\./);
    expect(String(server.requests[1]?.body.messages.at(-1)?.content)).toContain('not valid JSON');
    expect(notes(result)).toMatchObject([
      { verdict: 'pass', issues: [], failed: expect.stringMatching(/no valid answer after 2 attempts/) },
    ]);
    server.assertDone();
  });

  it('with onError: escalate, an unreachable judge leaves the answer to a person', async () => {
    const { app, server } = await judged([{ error: { status: 500 } }], {}, { onError: 'escalate' });
    const paused = await app.chat({ message: 'hello' });
    expect(paused.status).toBe('awaiting_approval');
    expect(paused.approvals?.[0]).toMatchObject({
      agent: 'route_to_user',
      message: 'answer from reply to "hello"',
    });
    expect(notes(paused)).toMatchObject([
      { verdict: 'escalate', failed: expect.stringMatching(/could not be reached/) },
    ]);
    server.assertDone();
  });

  it('over HTTP: an escalated answer waits for approval, and the approval delivers it', async () => {
    const { app, server } = await judged([verdict(0.9, ['quotes a price'], { escalate: true })]);
    const paused = await app.request('/v1/chat', postJson({ sessionId: 'http', message: 'hello' }));
    expect(paused.status).toBe(200);
    const pausedBody = (await paused.json()) as TurnResult;
    expect(pausedBody.status).toBe('awaiting_approval');
    const [approval] = pausedBody.approvals ?? [];
    expect(approval).toMatchObject({
      agent: 'route_to_user',
      message: 'answer from reply to "hello"',
      reason: 'critic: quotes a price',
    });

    const resolved = await app.request(
      `/v1/sessions/http/approvals/${approval?.id}`,
      postJson({ decision: 'approve' }),
    );
    expect(resolved.status).toBe(200);
    expect(await resolved.json()).toMatchObject({
      status: 'completed',
      reply: 'answer from reply to "hello"',
    });
    const session = (await (await app.request('/v1/sessions/http')).json()) as { messages: MessageItem[] };
    expect(session.messages.at(-1)).toMatchObject({
      role: 'assistant',
      content: 'answer from reply to "hello"',
    });
    server.assertDone();
  });
});
