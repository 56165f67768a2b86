import {
  AbstractOrchestrator,
  type AgentMeta,
  ConfigurationError,
  type Conversation,
  currentUserMessage,
  type Decision,
  latestToolResults,
  type Memory,
  type Orchestrator,
  RequestContext,
  type StepAnnotations,
  type ToolMessage,
  toolCall,
} from '@switchboard/core';
import { App, defineAgent, type TurnRecord, type TurnResult } from '@switchboard/runtime';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KeywordOrchestrator, type StepRule, withSteps } from '../src/index.js';
import { RecordingTracer } from './llm-recording-tracer.js';
import { describeRouterContract } from './router-contract.js';
import { DEMO_AGENTS } from './support/demo-agents.js';
import { answer, named, ObedientRouter, SHOP, SHOP_STEPS } from './support/shop-steps.js';
import { failingMemory } from './support/turn-driver.js';

describeRouterContract('withSteps(KeywordOrchestrator) with one default step allowing every agent', () => ({
  orchestrator: withSteps(new KeywordOrchestrator({ agents: DEMO_AGENTS }), {
    steps: [{ name: 'anything', description: 'Every agent may be called', isDefault: true }],
  }),
  routing: [
    { message: 'What time is it in Tokyo?', agent: 'clock' },
    { message: 'convert 5 miles to km', agent: 'converter' },
    { message: 'what is 12 plus 30', agent: 'calculator' },
  ],
}));

/** Always calls the agent the message names, whatever the candidates. */
class StubbornRouter extends AbstractOrchestrator {
  readonly refusals: string[] = [];
  constructor(agents: readonly AgentMeta[]) {
    super({ name: 'shop', agents });
  }
  protected handleMessage(conversation: Conversation): Decision {
    const results = latestToolResults(conversation);
    const refusals = results.filter((result) => result.metadata?.stepRefused);
    this.refusals.push(...refusals.map((refusal) => refusal.content));
    if (results.length > 0 && refusals.length === 0) return answer(results);
    const { agent, task } = named(conversation);
    return toolCall(agent, task);
  }
}

/**
 * A plain `Orchestrator` (no base class, so nothing checks its calls) that
 * names the agent of the message; shown a refusal, it calls the first candidate instead.
 */
function learningRouter(agents: readonly AgentMeta[], seen: string[]): Orchestrator {
  return {
    name: 'shop',
    agents,
    decide(conversation) {
      const results = latestToolResults(conversation);
      const refusal = results.find((result) => result.metadata?.stepRefused);
      if (refusal) {
        seen.push(refusal.content);
        return toolCall(conversation.agents[0]!.name, named(conversation).task);
      }
      if (results.length > 0) return answer(results);
      const { agent, task } = named(conversation);
      return toolCall(agent, task);
    },
  };
}

/** The answer of `GET /v1/sessions/:id`. */
interface SessionBody {
  turns: TurnRecord[];
}

const tracer = new RecordingTracer();
beforeAll(() => tracer.register());
afterAll(() => tracer.unregister());

const openApps: App[] = [];
afterEach(async () => {
  await Promise.all(openApps.splice(0).map((app) => app.close()));
});

/** An app whose shop agents record each run; `orchestrator` is wrapped in the shop's steps. */
function shopApp(orchestrator: Orchestrator, options: { memoryStore?: App['memory'] } = {}) {
  const runs: string[] = [];
  const agents = SHOP.map((meta) =>
    defineAgent({
      ...meta,
      run: (message) => {
        runs.push(meta.name);
        return `${meta.name} did "${message}"`;
      },
    }),
  );
  const app = new App({
    name: 'shop',
    agents,
    logLevel: 'silent',
    exposeErrorDetails: true,
    ...options,
  }).mount(withSteps(orchestrator, { steps: SHOP_STEPS }));
  openApps.push(app);
  return {
    app,
    runs,
    chat: (message: string, sessionId = 'shopper') => app.chat({ sessionId, message }),
    session: async (sessionId = 'shopper') =>
      (await (await app.request(`/v1/sessions/${sessionId}`)).json()) as SessionBody,
  };
}

/** The active step and the allowed agents of each step of a turn. */
function stepsOf(result: Pick<TurnResult, 'steps'>) {
  return result.steps.map((step) => [step.annotations?.activeStep, step.annotations?.allowedAgents]);
}

describe('withSteps', () => {
  it('starts a new session in the default step, and shows it in the session and on the decision span', async () => {
    const router = new ObedientRouter(SHOP);
    const shop = shopApp(router);
    tracer.spans.length = 0;

    const result = await shop.chat('catalog: show me red shoes');

    expect(result.reply).toBe('catalog did "show me red shoes"');
    const browsing = ['catalog', 'cart', 'support'];
    expect(router.candidates[0]).toEqual(browsing);
    expect(result.steps[0]?.annotations).toMatchObject({
      activeStep: 'browse',
      stepReason: 'default step of a new session',
      allowedAgents: browsing,
    });
    const [turn] = (await shop.session()).turns;
    expect(turn?.steps.map((step) => step.annotations?.activeStep)).toEqual(['browse', 'browse']);
    const span = tracer.spans.find((recorded) => recorded.name === 'route 0');
    expect(JSON.parse(String(span?.attributes['switchboard.step.annotations']))).toMatchObject({
      activeStep: 'browse',
      stepReason: 'default step of a new session',
    });
  });

  it('enforces a sequence across turns: each turn offers only its next agent, whatever the user asks', async () => {
    const router = new ObedientRouter(SHOP);
    const shop = shopApp(router);
    await shop.chat('catalog: red shoes');

    // Putting something in the cart matches the checkout's trigger once the cart has replied.
    const carted = await shop.chat('cart: add the red shoes');
    expect(stepsOf(carted)).toEqual([
      ['browse', ['catalog', 'cart', 'support']],
      ['checkout', ['address']],
    ]);
    expect(carted.steps[1]?.annotations?.stepReason).toBe(
      'conditions hold: something was just put in the cart',
    );

    // The user asks for the confirmation straight away: only the sequence's next agent is offered.
    router.candidates.length = 0;
    const first = await shop.chat('confirm: place my order now');
    const second = await shop.chat('confirm: place it!');
    const third = await shop.chat('support: where is my order?');
    expect(router.candidates.filter((_, index) => index % 2 === 0)).toEqual([
      ['address'],
      ['payment'],
      ['confirm'],
    ]);
    expect(shop.runs).toEqual(['catalog', 'cart', 'address', 'payment', 'confirm']);
    expect([first, second, third].map((result) => result.reply)).toEqual([
      'address did "place my order now"',
      'payment did "place it!"',
      'confirm did "where is my order?"',
    ]);
    expect(second.steps[0]?.annotations?.stepReason).toBe("still active: no step's conditions hold");

    // The completed sequence matches the after-sale step, which then stays.
    expect(stepsOf(third).at(-1)).toEqual(['after-sale', ['support']]);
    const after = await shop.chat('cart: add socks');
    expect(after.reply).toBe('support did "add socks"');
    expect(stepsOf(after)).toEqual([
      ['after-sale', ['support']],
      ['after-sale', ['support']],
    ]);
    expect(after.steps[1]?.annotations?.stepReason).toBe("still active: no step's conditions hold");

    const turns = (await shop.session()).turns;
    expect(turns.map((turn) => turn.steps[0]?.annotations?.activeStep)).toEqual([
      'browse',
      'browse',
      'checkout',
      'checkout',
      'checkout',
      'after-sale',
    ]);
  });

  it('applies the step’s allowed list once its sequence is done', async () => {
    const router = new ObedientRouter(SHOP);
    const steps: StepRule[] = [
      {
        name: 'checkout',
        description: 'Address then payment, then cart or support',
        conditions: [{ type: 'used', agent: 'cart' }],
        sequence: ['address', 'payment'],
        allowed: ['cart', 'support'],
      },
      { name: 'browse', description: 'Looking around', isDefault: true, allowed: ['catalog', 'cart'] },
    ];
    const app = new App({
      name: 'shop',
      agents: SHOP.map((meta) => defineAgent({ ...meta, run: () => `${meta.name} done` })),
      logLevel: 'silent',
    }).mount(withSteps(router, { steps }));
    openApps.push(app);
    const chat = (message: string) => app.chat({ sessionId: 's', message });

    for (const message of ['cart: shoes', 'x: 1', 'x: 2', 'x: 3', 'x: 4']) await chat(message);
    // The sequence first, over the allowed list; then the allowed list (the cart was used, so checkout stays).
    expect(router.candidates.filter((_, index) => index % 2 === 0)).toEqual([
      ['catalog', 'cart'],
      ['address'],
      ['payment'],
      ['cart', 'support'],
      ['cart', 'support'],
    ]);
  });

  it('refuses a call outside the step, asking the orchestrator once more with the reason', async () => {
    const seen: string[] = [];
    const shop = shopApp(learningRouter(SHOP, seen));
    await shop.chat('cart: red shoes');

    const result = await shop.chat('confirm: place my order');

    expect(result.status).toBe('completed');
    expect(result.reply).toBe('address did "place my order"');
    expect(shop.runs).toEqual(['cart', 'address']);
    expect(seen).toEqual([
      "Step 'checkout' of 'shop' refused the call to 'confirm': only address may be called now (the next agent of its sequence address → payment → confirm)",
    ]);
    expect(result.steps[0]?.annotations).toMatchObject({ activeStep: 'checkout', refused: ['confirm'] });
  });

  it('fails the turn with a clear error when the orchestrator insists on an out-of-step agent', async () => {
    const router = new StubbornRouter(SHOP);
    const shop = shopApp(router);
    await shop.chat('cart: red shoes');

    const result = await shop.chat('confirm: place my order');

    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('step_refused');
    expect(result.error?.message).toBe(
      "Step 'checkout' of 'shop' refused the call to 'confirm': only address may be called now (the next agent of its sequence address → payment → confirm)",
    );
    expect(router.refusals).toHaveLength(1);
    expect(shop.runs).toEqual(['cart']);
    const steps = (await shop.session()).turns[1]?.steps;
    expect(steps).toMatchObject([
      {
        kind: 'error',
        annotations: { activeStep: 'checkout', allowedAgents: ['address'], refused: ['confirm'] },
      },
    ]);

    // The refusal did not move the sequence: an app sharing the memory is offered address again.
    const next = shopApp(new ObedientRouter(SHOP), { memoryStore: shop.app.memory });
    expect((await next.chat('confirm: now')).reply).toBe('address did "now"');
  });

  it('fails the decision rather than route unchecked when session memory is down', async () => {
    const router = new ObedientRouter(SHOP);
    const shop = shopApp(router, { memoryStore: failingMemory(new Error('redis is down')) });
    const result = await shop.chat('catalog: shoes');
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('store_unavailable');
    expect(result.error?.message).toMatch(/could not read the session's step state/);
    expect(shop.runs).toEqual([]);
    expect(router.candidates).toEqual([]);
  });

  it('keeps each session’s step apart', async () => {
    const shop = shopApp(new ObedientRouter(SHOP));
    await shop.chat('cart: shoes', 'alice');
    expect((await shop.chat('confirm: go', 'alice')).reply).toBe('address did "go"');
    expect((await shop.chat('confirm: go', 'bob')).reply).toBe('catalog did "go"');
  });
});

describe('withSteps step state', () => {
  /** A session memory kept in a map, as the runtime would provide it. */
  function mapMemory(): Memory {
    const values = new Map<string, unknown>();
    return {
      scope: 'session',
      getContent: async <T>(key: string) => ({ success: true, data: values.get(key) as T | undefined }),
      setContent: async <T>(key: string, value: T) => {
        values.set(key, structuredClone(value));
        return { success: true, data: value };
      },
      deleteContent: async (key: string) => ({ success: true, data: values.delete(key) }),
      updateContent: async () => ({ success: false, error: new Error('not used') }),
    };
  }

  it('counts the replies of a decision once, even when the decision runs again', async () => {
    const memory = mapMemory();
    const context = new RequestContext({
      sessionId: 's',
      requestId: 'r',
      signal: new AbortController().signal,
      memory: () => memory,
    });
    const orchestrator = withSteps(new ObedientRouter(SHOP), { steps: SHOP_STEPS });
    const annotations: StepAnnotations[] = [];
    const recorder = { annotate: (added: StepAnnotations) => annotations.push(added), note() {}, usage() {} };
    const createdAt = new Date().toISOString();
    const reply = (agent: string, id: string): ToolMessage => ({
      id: `msg-${id}`,
      role: 'tool',
      name: agent,
      toolCallId: id,
      content: `${agent} done`,
      status: 'ok',
      createdAt,
    });
    const decide = (results: ToolMessage[]) =>
      RequestContext.run(context, () =>
        orchestrator.decide({
          sessionId: 's',
          turnId: 't',
          messages: [{ id: 'u', role: 'user', content: 'go', createdAt }, ...results],
          turnStart: 0,
          hop: 1,
          agents: orchestrator.agents,
          lastResults: results,
          recorder,
        }),
      );

    await decide([reply('cart', 'call-1')]);
    await decide([reply('address', 'call-2')]);
    // The same decision again (a replica retrying it): the address reply is not counted twice.
    await decide([reply('address', 'call-2')]);
    expect(annotations.map((added) => [added.activeStep, added.allowedAgents])).toEqual([
      ['checkout', ['address']],
      ['checkout', ['payment']],
      ['checkout', ['payment']],
    ]);
    const stored = await memory.getContent(orchestrator.memoryKey);
    expect(stored).toMatchObject({ data: { recent: ['cart', 'address'], sequenceIndex: 1 } });
  });
});

describe('withSteps configuration', () => {
  const inner = () => new ObedientRouter(SHOP);
  const failure = (steps: unknown, recentWindow?: number) => {
    try {
      withSteps(inner(), { steps: steps as StepRule[], recentWindow });
    } catch (error) {
      expect(ConfigurationError.isInstance(error)).toBe(true);
      return (error as Error).message;
    }
    return 'no error';
  };

  it('names what is wrong at construction', () => {
    expect(failure([{ name: 'a', description: '', sequence: ['address', 'paymnet'] }])).toBe(
      "Step rules 'shop': step 'a' names the unknown agent 'paymnet' in its sequence; agents: catalog, cart, address, payment, confirm, support",
    );
    expect(failure([{ name: 'a', description: '', denied: ['pay*', 'admin_*'] }])).toMatch(
      /step 'a' has the pattern 'admin_\*' in denied, which matches no agent/,
    );
    expect(failure([{ name: 'a', description: '', alowed: ['cart'] }])).toMatch(
      /invalid steps: steps\.0: Unrecognized key: "alowed"/,
    );
    expect(
      failure([
        { name: 'a', description: '', isDefault: true },
        { name: 'b', description: '', isDefault: true },
      ]),
    ).toMatch(/only one step can be the default; a, b all are/);
    expect(
      failure([
        { name: 'a', description: '' },
        { name: 'a', description: '' },
      ]),
    ).toMatch(/two steps are named 'a'/);
    expect(failure([{ name: 'a', description: '', conditions: [{ type: 'sequence_match' }] }])).toMatch(
      /sequence_match condition without a sequence, and no sequence of its own/,
    );
    expect(
      failure(
        [
          {
            name: 'a',
            description: '',
            conditions: [{ type: 'sequence_match', sequence: ['cart', 'cart'] }],
          },
        ],
        1,
      ),
    ).toMatch(/matches a sequence of 2 calls, more than recentWindow \(1\) keeps/);
    expect(
      failure([{ name: 'a', description: '', conditions: [{ type: 'predicate', test: 'yes' }] }]),
    ).toMatch(/steps\.0\.conditions\.0\.test: must be a function/);
    expect(failure([])).toMatch(/at least one step is needed/);
    expect(
      failure([{ name: 'a', description: '', allowed: ['cart'], availableTools: { allowed: ['cart'] } }]),
    ).toMatch(/gives both allowed\/denied and availableTools/);
  });

  it('runs a predicate condition with the session’s step state', async () => {
    const router = new ObedientRouter(SHOP);
    const steps: StepRule[] = [
      {
        name: 'help',
        description: 'The user asks for help',
        conditions: [
          {
            type: 'predicate',
            description: 'the user asks for help',
            test: (state, conversation) =>
              state.recentlyUsed.includes('catalog') &&
              /help/i.test(currentUserMessage(conversation).content),
          },
        ],
        allowed: ['support'],
      },
      { name: 'browse', description: 'Looking around', isDefault: true },
    ];
    const app = new App({
      name: 'shop',
      agents: SHOP.map((meta) => defineAgent({ ...meta, run: () => `${meta.name} done` })),
      logLevel: 'silent',
    }).mount(withSteps(router, { steps }));
    openApps.push(app);
    const help = await app.chat({ sessionId: 's', message: 'catalog: help me' });
    expect(help.steps[0]?.annotations?.activeStep).toBe('browse');
    const again = await app.chat({ sessionId: 's', message: 'catalog: help me please' });
    expect(again.steps[0]?.annotations).toMatchObject({
      activeStep: 'help',
      stepReason: 'conditions hold: the user asks for help',
    });
    expect(again.reply).toBe('support done');
  });
});
