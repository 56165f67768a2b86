import {
  AbstractOrchestrator,
  type AgentMeta,
  ConfigurationError,
  type Conversation,
  currentUserMessage,
  type Decision,
  latestToolResults,
  routeToUser,
  streamAnswer,
  toolCall,
  turnMessages,
} from '@switchboard/core';
import { App, defineAgent, type TurnEvent } from '@switchboard/runtime';
import { createRedisStores } from '@switchboard/runtime/redis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, useRedis } from '../../runtime/test/support/redis.js';
import { type CriticOptions, withCritic } from '../src/critic.js';
import type { CriticReview, CriticVerdict } from '../src/critic-judge.js';
import type { Critic } from '../src/critic-review.js';
import { isCriticFeedback } from '../src/critic-state.js';
import { KeywordOrchestrator } from '../src/keyword-orchestrator.js';
import { RecordingTracer } from './llm-recording-tracer.js';
import { describeRouterContract } from './router-contract.js';
import { failingMemory } from './support/turn-driver.js';

const writer: AgentMeta = { name: 'writer', description: 'Writes texts', keywords: ['write', 'poem'] };
const clock: AgentMeta = { name: 'clock', description: 'Tells the time', keywords: ['time', 'clock'] };

/**
 * Asks the writer, then answers `answer from <reply>`. Shown a critic's
 * feedback, it answers `revised <n>: <first reply>` at once, or (`onFeedback:
 * 'call'`) asks the writer again first, as a router that gathers more would.
 */
class Drafter extends AbstractOrchestrator {
  /** The text of every critic feedback it was shown. */
  readonly feedback: string[] = [];
  decisions = 0;
  readonly #onFeedback: 'answer' | 'call';
  readonly #stream: boolean;
  #approveRewrites = false;

  constructor({
    onFeedback = 'answer',
    stream = false,
  }: { onFeedback?: 'answer' | 'call'; stream?: boolean } = {}) {
    super({ name: 'drafter', agents: [writer] });
    this.#onFeedback = onFeedback;
    this.#stream = stream;
  }

  protected handleMessage(conversation: Conversation): Decision {
    this.decisions++;
    const [latest] = latestToolResults(conversation);
    if (!latest) return toolCall('writer', currentUserMessage(conversation).content);
    if (isCriticFeedback(latest)) {
      this.feedback.push(latest.content);
      if (this.#onFeedback === 'call')
        return toolCall('writer', 'rewrite it', { requiresApproval: this.#approveRewrites });
      const [first] = turnMessages(conversation).filter((message) => message.role === 'tool');
      return routeToUser(`revised ${this.feedback.length}: ${first?.content}`);
    }
    const answer = `answer from ${latest.content}`;
    if (this.#stream) streamAnswer(conversation, answer);
    return routeToUser(answer, { reason: 'the writer replied' });
  }

  /** Makes its call after a send-back wait for a person (so that the turn can move to another replica). */
  approveRewrites(): this {
    this.#approveRewrites = true;
    return this;
  }
}

/** A critic function scoring answers by their first word(s), recording what it reviewed. */
function scripted(verdicts: (review: CriticReview) => CriticVerdict) {
  const reviews: CriticReview[] = [];
  const critic = (review: CriticReview) => {
    reviews.push(review);
    return verdicts(review);
  };
  return { critic, reviews };
}

const openApps: App[] = [];
afterEach(async () => {
  await Promise.all(openApps.splice(0).map((app) => app.close()));
});

function appWith(
  inner: AbstractOrchestrator,
  critic: Critic,
  options: CriticOptions = {},
  stores: object = {},
): App {
  const agents = [
    defineAgent({ ...writer, run: (message) => `reply to "${message}"` }),
    ...(inner.agents.some((agent) => agent.name === 'clock')
      ? [defineAgent({ ...clock, run: () => 'it is noon' })]
      : []),
  ];
  const app = new App({ name: 'critic', agents, logLevel: 'silent', ...stores }).mount(
    withCritic(inner, critic, options),
  );
  openApps.push(app);
  return app;
}

const notes = (steps: readonly { kind: string; label?: string; annotations?: Record<string, unknown> }[]) =>
  steps
    .filter((step) => step.kind === 'note' && step.label === 'critic')
    .map((step) => step.annotations?.critic);

const tracer = new RecordingTracer();
beforeAll(() => tracer.register());
afterAll(() => tracer.unregister());

describeRouterContract('withCritic over KeywordOrchestrator (a passing critic)', () => ({
  orchestrator: withCritic(new KeywordOrchestrator({ agents: [writer, clock] }), () => ({ score: 1 })),
  routing: [
    { message: 'write me a poem', agent: 'writer' },
    { message: 'what time is it on the clock', agent: 'clock' },
  ],
}));

describe('withCritic with a function critic', () => {
  it('sends a low-scored answer back once with the issues, then delivers the better one', async () => {
    const inner = new Drafter();
    const { critic, reviews } = scripted(({ answer }) =>
      answer.startsWith('revised') ? { score: 0.9 } : { score: 0.3, issues: ['name the source'] },
    );
    const app = appWith(inner, critic);
    const result = await app.chat({ sessionId: 'back', message: 'hello' });

    expect(result).toMatchObject({ status: 'completed', reply: 'revised 1: reply to "hello"' });
    // The orchestrator saw the issues and its own answer, once.
    expect(inner.feedback).toHaveLength(1);
    expect(inner.feedback[0]).toContain('name the source');
    expect(inner.feedback[0]).toContain('answer from reply to "hello"');
    // The critic saw the request and the agent's reply beside each answer.
    expect(reviews.map(({ answer, attempt }) => [attempt, answer])).toEqual([
      [0, 'answer from reply to "hello"'],
      [1, 'revised 1: reply to "hello"'],
    ]);
    expect(reviews[0]).toMatchObject({
      request: 'hello',
      replies: [{ agent: 'writer', status: 'ok', content: 'reply to "hello"' }],
    });
    expect(result.steps.map((step) => step.kind)).toEqual(['call', 'note', 'note', 'answer']);
    expect(notes(result.steps)).toEqual([
      {
        verdict: 'retry',
        attempt: 0,
        score: 0.3,
        issues: ['name the source'],
        answer: 'answer from reply to "hello"',
      },
      { verdict: 'pass', attempt: 1, score: 0.9, issues: [] },
    ]);
    // The draft never reached the user.
    const stored = await app.sessions.read('back');
    expect(
      stored.filter((message) => message.role === 'assistant').map((message) => message.content),
    ).toEqual(['revised 1: reply to "hello"']);
  });

  it("delivers the critic's rewrite and records the answer it replaced", async () => {
    const inner = new Drafter();
    const app = appWith(inner, () => ({
      score: 0.5,
      issues: ['too terse'],
      rewrite: 'Here is the reply: hello!',
    }));
    const result = await app.chat({ sessionId: 'rewrite', message: 'hello' });

    expect(result.reply).toBe('Here is the reply: hello!');
    expect(inner.feedback).toEqual([]);
    expect(notes(result.steps)).toEqual([
      {
        verdict: 'rewrite',
        attempt: 0,
        score: 0.5,
        issues: ['too terse'],
        answer: 'answer from reply to "hello"',
      },
    ]);
    expect((await app.sessions.read('rewrite')).at(-1)).toMatchObject({
      role: 'assistant',
      content: 'Here is the reply: hello!',
    });
  });

  it('stops at the bound and delivers the best-scored answer of the turn, with a note', async () => {
    const inner = new Drafter();
    const scores = [0.4, 0.6, 0.5];
    const { critic, reviews } = scripted(() => ({
      score: scores[reviews.length - 1] ?? 0,
      issues: ['vague'],
    }));
    const result = await appWith(inner, critic, { maxRetries: 2 }).chat({ message: 'hello' });

    // Two send-backs, three reviews, never more.
    expect(inner.feedback).toHaveLength(2);
    expect(reviews).toHaveLength(3);
    expect(result.reply).toBe('revised 1: reply to "hello"');
    expect(notes(result.steps).map((note) => (note as { verdict: string }).verdict)).toEqual([
      'retry',
      'retry',
      'bound',
    ]);
    expect(notes(result.steps)[2]).toMatchObject({ attempt: 2, score: 0.5, bound: true, bestScore: 0.6 });
    expect(result.steps.at(-1)?.calls[0]?.reason).toMatch(/below the threshold after 2 send-backs/);
  });

  it('keeps the bound across hops when the orchestrator calls agents again after a send-back', async () => {
    const inner = new Drafter({ onFeedback: 'call' });
    const { critic, reviews } = scripted(({ answer }) => ({
      score: answer.includes('rewrite it') ? 0.2 : 0.4,
      issues: ['vague'],
    }));
    const result = await appWith(inner, critic).chat({ message: 'hello' });

    expect(inner.feedback).toHaveLength(1);
    expect(reviews.map((review) => review.attempt)).toEqual([0, 1]);
    // The first answer scored better than the one written after the send-back.
    expect(result.reply).toBe('answer from reply to "hello"');
    expect(result.steps.map((step) => [step.hop, step.kind])).toEqual([
      [0, 'call'],
      [1, 'note'],
      [1, 'call'],
      [2, 'note'],
      [2, 'answer'],
    ]);
    expect(notes(result.steps)).toMatchObject([
      { verdict: 'retry', attempt: 0 },
      { verdict: 'bound', attempt: 1, bestScore: 0.4 },
    ]);
  });

  it('sends nothing back when session memory cannot be read, so the bound still holds', async () => {
    const inner = new Drafter();
    const app = appWith(
      inner,
      () => ({ score: 0.2, issues: ['vague'] }),
      {},
      { memoryStore: failingMemory(new Error('memory is down')) },
    );
    const result = await app.chat({ message: 'hello' });

    expect(result).toMatchObject({ status: 'completed', reply: 'answer from reply to "hello"' });
    expect(inner.feedback).toEqual([]);
    expect(notes(result.steps)).toEqual([
      {
        verdict: 'bound',
        attempt: 0,
        score: 0.2,
        issues: ['vague'],
        bound: true,
        bestScore: 0.2,
        stateUnavailable: true,
      },
    ]);
  });

  it('makes an escalated answer wait for a person, and delivers it once approved', async () => {
    const inner = new Drafter();
    const app = appWith(inner, () => ({ score: 0.9, issues: ['promises a refund'], escalate: true }));
    const events: TurnEvent[] = [];
    const paused = await app.chat({
      sessionId: 'escalate',
      message: 'hello',
      onEvent: (event) => events.push(event),
    });

    expect(paused.status).toBe('awaiting_approval');
    expect(paused.approvals).toMatchObject([
      {
        agent: 'route_to_user',
        message: 'answer from reply to "hello"',
        reason: 'critic: promises a refund',
        status: 'pending',
      },
    ]);
    expect(events.some((event) => event.type === 'message')).toBe(false);
    expect((await app.sessions.read('escalate')).some((message) => message.role === 'assistant')).toBe(false);
    expect(notes(paused.steps)).toEqual([
      { verdict: 'escalate', attempt: 0, score: 0.9, issues: ['promises a refund'] },
    ]);

    const done = await app.resolveApproval({
      sessionId: 'escalate',
      approvalId: paused.approvals![0]!.id,
      decision: 'approve',
    });
    expect(done).toMatchObject({ status: 'completed', reply: 'answer from reply to "hello"' });
    expect((await app.sessions.read('escalate')).at(-1)).toMatchObject({
      role: 'assistant',
      content: 'answer from reply to "hello"',
    });
  });

  it('with escalateAtBound, the best answer waits for a person once the send-backs are used up', async () => {
    const inner = new Drafter();
    const app = appWith(inner, () => ({ score: 0.1, issues: ['wrong'] }), { escalateAtBound: true });
    const paused = await app.chat({ sessionId: 'bound', message: 'hello' });

    expect(inner.feedback).toHaveLength(1);
    expect(paused.status).toBe('awaiting_approval');
    // Equal scores: the later answer, written with the feedback, is the best.
    expect(paused.approvals?.[0]).toMatchObject({
      agent: 'route_to_user',
      message: 'revised 1: reply to "hello"',
      reason: 'critic: still below the threshold after 1 send-back',
    });
    const rejected = await app.resolveApproval({
      sessionId: 'bound',
      approvalId: paused.approvals![0]!.id,
      decision: 'reject',
      comment: 'not good enough',
    });
    expect(rejected.reply).toBe('The answer to this request was not approved. (not good enough)');
  });

  it('lets the answer pass when the critic fails (recorded), or escalates it with onError', async () => {
    const throwing = () => {
      throw new Error('critic exploded');
    };
    const passed = await appWith(new Drafter(), throwing).chat({ message: 'hello' });
    expect(passed).toMatchObject({ status: 'completed', reply: 'answer from reply to "hello"' });
    expect(notes(passed.steps)).toEqual([
      { verdict: 'pass', attempt: 0, issues: [], failed: 'the critic threw: critic exploded' },
    ]);

    const invalid = await appWith(new Drafter(), () => ({ score: 7 })).chat({ message: 'hello' });
    expect(invalid.reply).toBe('answer from reply to "hello"');
    expect(notes(invalid.steps)[0]).toMatchObject({
      verdict: 'pass',
      failed: expect.stringMatching(/invalid verdict/),
    });

    const escalated = await appWith(new Drafter(), throwing, { onError: 'escalate' }).chat({
      message: 'hello',
    });
    expect(escalated.status).toBe('awaiting_approval');
    expect(escalated.approvals?.[0]).toMatchObject({
      agent: 'route_to_user',
      message: 'answer from reply to "hello"',
      reason: 'critic: the review failed, so a person checks the answer',
    });
    // The error's text stays in the record, off the approval the client sees.
    expect(JSON.stringify(escalated.approvals)).not.toContain('exploded');
  });

  it('does not stream an answer before its review', async () => {
    const inner = new Drafter({ stream: true });
    const app = appWith(inner, () => ({ score: 0.2, rewrite: 'The reviewed answer.' }));
    const events: TurnEvent[] = [];
    const result = await app.chat({ message: 'hello', onEvent: (event) => events.push(event) });

    expect(result.reply).toBe('The reviewed answer.');
    expect(events.filter((event) => event.type === 'answer-delta')).toEqual([]);
    expect(events.find((event) => event.type === 'message')).toMatchObject({
      content: 'The reviewed answer.',
    });
  });

  it('reviews on its own span under the decision span, with the score and verdict', async () => {
    tracer.spans.length = 0;
    const inner = new Drafter();
    const critic = ({ answer }: CriticReview) =>
      answer.startsWith('revised') ? { score: 0.9 } : { score: 0.3, issues: ['name the source'] };
    const result = await appWith(inner, critic).chat({ sessionId: 'traced', message: 'hello' });
    expect(result.reply).toBe('revised 1: reply to "hello"');

    const decision = tracer.spans.find((span) => span.name === 'route 1');
    const reviews = tracer.spans.filter((span) => span.name === 'review');
    expect(reviews).toHaveLength(2);
    for (const review of reviews) {
      expect(review.parentSpanId).toBe(decision?.spanId);
      expect(review.ended).toBe(true);
      expect(review.attributes).toMatchObject({
        'langfuse.observation.type': 'evaluator',
        'session.id': 'traced',
        'switchboard.critic.kind': 'function',
      });
    }
    expect(reviews.map((span) => span.attributes)).toMatchObject([
      {
        'switchboard.critic.score': 0.3,
        'switchboard.critic.verdict': 'retry',
        'switchboard.critic.attempt': 0,
        'switchboard.critic.issues': ['name the source'],
      },
      {
        'switchboard.critic.score': 0.9,
        'switchboard.critic.verdict': 'pass',
        'switchboard.critic.attempt': 1,
      },
    ]);
    expect(String(reviews[0]?.attributes['langfuse.observation.input'])).toContain('answer from reply to');
    expect(JSON.parse(String(reviews[1]?.attributes['langfuse.observation.output']))).toMatchObject({
      verdict: 'pass',
      score: 0.9,
    });
    // The decision span carries the reviews as its notes.
    expect(String(decision?.attributes['switchboard.step.notes'])).toContain('"verdict":"retry"');
  });

  it('refuses a misconfiguration when it is built', () => {
    const inner = new Drafter();
    const pass = () => ({ score: 1 });
    const built = (make: () => unknown) => {
      try {
        make();
      } catch (error) {
        return ConfigurationError.isInstance(error)
          ? String((error as Error).message)
          : 'not a ConfigurationError';
      }
      return 'built';
    };
    expect(built(() => withCritic(inner, pass, { threshold: 1.5 }))).toMatch(
      /threshold must be a number from 0 to 1/,
    );
    expect(built(() => withCritic(inner, pass, { maxRetries: -1 }))).toMatch(/maxRetries must be an integer/);
    expect(built(() => withCritic(inner, {} as Critic))).toMatch(
      /a function or judge options with a model name/,
    );
    expect(built(() => withCritic(inner, { model: 'judge' }))).toMatch(/needs a client or an apiKey/);
    expect(built(() => withCritic({} as AbstractOrchestrator, pass))).toMatch(/must be an orchestrator/);
    expect(withCritic(inner, pass)).toMatchObject({
      name: 'drafter',
      memoryKey: 'critic:drafter',
      agents: [writer],
    });
  });
});

describe('withCritic across replicas (Redis)', () => {
  const redis = useRedis();

  it('a turn that moves to another replica after a send-back still stops at the bound', async () => {
    const keyPrefix = redis.prefix();
    const replica = () => {
      const inner = new Drafter({ onFeedback: 'call' }).approveRewrites();
      const { critic, reviews } = scripted(({ answer }) => ({
        score: answer.includes('rewrite it') ? 0.2 : 0.4,
        issues: ['vague'],
      }));
      const app = appWith(inner, critic, {}, createRedisStores(REDIS_URL, { keyPrefix }));
      return { app, inner, reviews };
    };
    const a = replica();
    const b = replica();
    const paused = await a.app.chat({ sessionId: 'replicas', message: 'hello' });
    expect(paused.status).toBe('awaiting_approval');
    expect(paused.approvals?.[0]).toMatchObject({ agent: 'writer', message: 'rewrite it' });
    expect(a.inner.feedback).toHaveLength(1);

    const done = await b.app.resolveApproval({
      sessionId: 'replicas',
      approvalId: paused.approvals![0]!.id,
      decision: 'approve',
    });
    // Replica b's critic knew of a's send-back: no second one, and a's better answer goes out.
    expect(done).toMatchObject({ status: 'completed', reply: 'answer from reply to "hello"' });
    expect(b.inner.feedback).toEqual([]);
    expect(b.reviews.map((review) => review.attempt)).toEqual([1]);
    expect(notes(done.steps)).toMatchObject([
      { verdict: 'retry', attempt: 0 },
      { verdict: 'bound', attempt: 1, bestScore: 0.4 },
    ]);
  });
});
