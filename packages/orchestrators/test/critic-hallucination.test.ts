import {
  AbstractOrchestrator,
  type Conversation,
  currentUserMessage,
  type Decision,
  latestToolResults,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import {
  App,
  InMemoryVectorStore,
  openAIEmbedder,
  type RetrievalBundle,
  retrievalAgent,
} from '@switchboard/runtime';
import { createScriptedModelServer } from '@switchboard/runtime/testing';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { withCritic } from '../src/critic.js';
import { lexicalHallucinationRisk } from '../src/critic-grounding.js';
import type { CriticReview } from '../src/critic-judge.js';
import { isCriticFeedback } from '../src/critic-state.js';

const server = await createScriptedModelServer();
afterAll(() => server.close());
const store = new InMemoryVectorStore({
  embed: openAIEmbedder({ model: 'hash-embed', client: new OpenAI({ apiKey: 'test', baseURL: server.url }) }),
});
await store.add([
  {
    id: 'refunds',
    text: 'Refunds are paid to the original payment card within five business days after the returned item reaches our warehouse.',
  },
  {
    id: 'shipping',
    text: 'Standard shipping takes three to five days; express shipping delivers the next working day.',
  },
]);
const docs = retrievalAgent({ name: 'docs', store, topK: 2 });

const GROUNDED =
  'Refunds are paid to your original payment card within five business days of the item reaching the warehouse.';
const INVENTED =
  'Refunds arrive as cash at any of our four hundred branches worldwide the same afternoon, with a bonus voucher.';

/** Asks `docs`, answers `first`; shown the critic's feedback, answers `second`. */
class Answerer extends AbstractOrchestrator {
  readonly feedback: string[] = [];
  constructor(
    readonly first: string,
    readonly second: string,
  ) {
    super({ name: 'answerer', agents: [{ name: 'docs', description: 'Searches the help pages' }] });
  }
  protected handleMessage(conversation: Conversation): Decision {
    const [latest] = latestToolResults(conversation);
    if (!latest) return toolCall('docs', currentUserMessage(conversation).content);
    if (isCriticFeedback(latest)) {
      this.feedback.push(latest.content);
      return routeToUser(this.second);
    }
    return routeToUser(this.first);
  }
}

const notes = (steps: readonly { kind: string; label?: string; annotations?: Record<string, unknown> }[]) =>
  steps
    .filter((step) => step.kind === 'note' && step.label === 'critic')
    .map((step) => step.annotations?.critic);

async function run(inner: Answerer, options: Parameters<typeof withCritic>[2], reviews: CriticReview[] = []) {
  const critic = withCritic(
    inner,
    (review) => {
      reviews.push(review);
      return { score: 0.9 };
    },
    options,
  );
  const app = new App({ name: 'desk', agents: [docs] }).mount(critic);
  try {
    return await app.chat({ message: 'how long do refunds take to reach my card?' });
  } finally {
    await app.close();
  }
}

describe('lexicalHallucinationRisk', () => {
  const bundle: RetrievalBundle = {
    kind: 'retrieval',
    query: 'refunds',
    items: [
      {
        id: 'refunds#0',
        documentId: 'refunds',
        text: 'Refunds are paid to the original payment card within five business days.',
        score: 0.8,
        source: 'refunds',
      },
    ],
    sources: ['refunds'],
    summary: 'Refunds are paid to the original card within five business days.',
    summarizedBy: 'snippets',
    ranking: 'cosine',
  };

  it('is 0 for an answer the sources support, 1 for one they do not, and the share of unsupported sentences between', () => {
    expect(
      lexicalHallucinationRisk('Refunds are paid to the original card within five business days.', [bundle]),
    ).toBe(0);
    expect(lexicalHallucinationRisk(INVENTED, [bundle])).toBe(1);
    expect(lexicalHallucinationRisk(`${GROUNDED} ${INVENTED}`, [bundle])).toBe(0.5);
    // Too short to judge, or restating the request: no risk.
    expect(lexicalHallucinationRisk('Yes.', [bundle])).toBe(0);
    expect(
      lexicalHallucinationRisk(
        'You asked about wire transfer limits.',
        [bundle],
        'what are the wire transfer limits',
      ),
    ).toBe(0);
  });
});

describe('withCritic: hallucination risk against the retrieval bundle the turn used', () => {
  it('sends back an answer the retrieved sources do not support, and passes the grounded one, recording the risk', async () => {
    const inner = new Answerer(INVENTED, GROUNDED);
    const reviews: CriticReview[] = [];
    const result = await run(inner, { hallucination: true }, reviews);
    expect(result).toMatchObject({ status: 'completed', reply: GROUNDED });
    expect(inner.feedback[0]).toContain('hallucination risk 1.00');
    const [first, second] = notes(result.steps) as { verdict: string; hallucinationRisk: number }[];
    expect(first).toMatchObject({ verdict: 'retry', hallucinationRisk: 1 });
    expect(second?.verdict).toBe('pass');
    expect(second?.hallucinationRisk).toBeLessThanOrEqual(0.5);
    // The critic is shown the bundle too.
    expect(reviews[0]?.retrieval?.[0]?.items[0]?.documentId).toBe('refunds');
  });

  it('delivers the best answer at the bound when no answer is grounded, and leaves answers alone without the check', async () => {
    const bounded = await run(new Answerer(INVENTED, INVENTED), { hallucination: { maxRisk: 0.3 } });
    expect(notes(bounded.steps).map((note) => (note as { verdict: string }).verdict)).toEqual([
      'retry',
      'bound',
    ]);

    const unchecked = await run(new Answerer(INVENTED, GROUNDED), {});
    expect(unchecked.reply).toBe(INVENTED);
    expect(notes(unchecked.steps)).toEqual([{ verdict: 'pass', attempt: 0, issues: [], score: 0.9 }]);
  });

  it("uses the critic's own hallucinationRisk when it is higher", async () => {
    const critic = withCritic(
      new Answerer(GROUNDED, GROUNDED),
      () => ({ score: 0.95, hallucinationRisk: 0.8 }),
      {
        hallucination: { maxRisk: 0.5 },
        maxRetries: 0,
      },
    );
    const app = new App({ name: 'desk', agents: [docs] }).mount(critic);
    try {
      const result = await app.chat({ message: 'how long do refunds take to reach my card?' });
      expect(notes(result.steps)[0]).toMatchObject({ verdict: 'bound', hallucinationRisk: 0.8 });
    } finally {
      await app.close();
    }
    expect(() =>
      withCritic(new Answerer('a', 'b'), () => ({ score: 1 }), { hallucination: { maxRisk: 2 } }),
    ).toThrow(/maxRisk/);
  });

  it('asks a judge model for its hallucinationRisk in the strict verdict schema and acts on it', async () => {
    const verdict = (risk: number) =>
      JSON.stringify({ score: 0.9, issues: [], rewrite: '', escalate: false, hallucinationRisk: risk });
    server.push(verdict(0.9), verdict(0.1));
    const judge = {
      model: 'judge-1',
      client: new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 }),
    };
    const inner = new Answerer(GROUNDED, `${GROUNDED} Thanks for asking.`);
    const start = server.requests.length;
    const critic = withCritic(inner, judge, { hallucination: { maxRisk: 0.5, lexical: false } });
    const app = new App({ name: 'desk', agents: [docs] }).mount(critic);
    try {
      const result = await app.chat({ message: 'how long do refunds take to reach my card?' });
      expect(notes(result.steps)).toMatchObject([
        { verdict: 'retry', hallucinationRisk: 0.9 },
        { verdict: 'pass', hallucinationRisk: 0.1 },
      ]);
    } finally {
      await app.close();
    }
    const format = server.requests.slice(start).find((request) => request.path === '/v1/chat/completions')
      ?.body.response_format as unknown as { json_schema: { schema: { required: string[] } } };
    expect(format.json_schema.schema.required).toContain('hallucinationRisk');
    server.assertDone();
  });
});
