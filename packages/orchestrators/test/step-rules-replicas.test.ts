import { App, defineAgent, type TurnRecord } from '@switchboard/runtime';
import { createRedisStores } from '@switchboard/runtime/redis';
import { afterEach, describe, expect, it } from 'vitest';
import { REDIS_URL, useRedis } from '../../runtime/test/support/redis.js';
import { type StepRulesOrchestrator, withSteps } from '../src/index.js';
import { ObedientRouter, SHOP, SHOP_STEPS } from './support/shop-steps.js';

const redis = useRedis();

const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

/** One replica: its own app and router over the shared Redis prefix; its agents log `<label>:<agent>`. */
function replica(label: string, keyPrefix: string, runs: string[]) {
  const router = new ObedientRouter(SHOP);
  const orchestrator: StepRulesOrchestrator = withSteps(router, { steps: SHOP_STEPS });
  const agents = SHOP.map((meta) =>
    defineAgent({
      ...meta,
      run: (message) => {
        runs.push(`${label}:${meta.name}`);
        return `${meta.name} on ${label}: ${message}`;
      },
    }),
  );
  const app = new App({
    name: 'shop',
    agents,
    logLevel: 'silent',
    ...createRedisStores(REDIS_URL, { keyPrefix }),
  }).mount(orchestrator);
  apps.push(app);
  return {
    app,
    router,
    chat: (message: string) => app.chat({ sessionId: 'shared-cart', message }),
    turns: async () =>
      ((await (await app.request('/v1/sessions/shared-cart')).json()) as { turns: TurnRecord[] }).turns,
    stepState: () => app.memory.get('session:shared-cart', orchestrator.memoryKey),
  };
}

describe('withSteps across two replicas sharing one Redis', () => {
  it('continues the sequence on whichever replica takes the next turn', async () => {
    const keyPrefix = redis.prefix();
    const runs: string[] = [];
    const a = replica('A', keyPrefix, runs);
    const b = replica('B', keyPrefix, runs);

    await a.chat('cart: red shoes');
    // Each replica is offered only the sequence's next agent, whatever the user asks for.
    const replies = [
      (await b.chat('confirm: place my order')).reply,
      (await a.chat('confirm: place it')).reply,
      (await b.chat('catalog: more shoes')).reply,
      (await a.chat('cart: add socks')).reply,
    ];

    expect(runs).toEqual(['A:cart', 'B:address', 'A:payment', 'B:confirm', 'A:support']);
    expect(replies).toEqual([
      'address on B: place my order',
      'payment on A: place it',
      'confirm on B: more shoes',
      'support on A: add socks',
    ]);
    const firstDecisions = (router: ObedientRouter) =>
      router.candidates.filter((_, index) => index % 2 === 0);
    expect(firstDecisions(a.router)).toEqual([['catalog', 'cart', 'support'], ['payment'], ['support']]);
    expect(firstDecisions(b.router)).toEqual([['address'], ['confirm']]);

    // Both replicas read the same turns, each step with its active step, and the same stored state.
    const fromA = await a.turns();
    expect(await b.turns()).toEqual(fromA);
    expect(fromA.map((turn) => turn.steps.map((step) => step.annotations?.activeStep))).toEqual([
      ['browse', 'checkout'],
      ['checkout', 'checkout'],
      ['checkout', 'checkout'],
      ['checkout', 'after-sale'],
      ['after-sale', 'after-sale'],
    ]);
    const stored = await a.stepState();
    expect(await b.stepState()).toEqual(stored);
    expect(stored).toMatchObject({
      v: 1,
      activeStep: 'after-sale',
      recent: ['cart', 'address', 'payment', 'confirm', 'support'],
      sequenceIndex: 0,
    });
  });
});
