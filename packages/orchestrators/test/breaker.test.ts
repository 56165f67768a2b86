import {
  AbstractOrchestrator,
  type Conversation,
  latestToolResults,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import { type Agent, App, defineAgent, InMemoryMemoryStore, type MemoryStore } from '@switchboard/runtime';
import { createRedisStores } from '@switchboard/runtime/redis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { REDIS_URL, useRedis } from '../../runtime/test/support/redis.js';
import { applyOutcomes, EMPTY_STATE, MAX_BANNED_AGENTS, MAX_TRACKED_AGENTS } from '../src/breaker-state.js';
import { fallbackChain, withBreaker } from '../src/index.js';

const redis = useRedis();

/** Calls `x` while it is offered, else `y`; answers with the reply. `stubborn` calls `x` whatever is offered. */
class PreferX extends AbstractOrchestrator {
  constructor(readonly stubborn = false) {
    super({
      name: 'prefer-x',
      agents: [
        { name: 'x', description: 'x' },
        { name: 'y', description: 'y' },
      ],
    });
  }
  protected handleMessage(conversation: Conversation) {
    const [reply] = latestToolResults(conversation);
    if (reply) return routeToUser(`${reply.name}: ${reply.status}`);
    const offered = conversation.agents.some((agent) => agent.name === 'x');
    return toolCall(this.stubborn || offered ? 'x' : 'y', 'go');
  }
}

function agents() {
  const runs: string[] = [];
  const state = { xFails: true };
  const list: Agent[] = ['x', 'y'].map((name) =>
    defineAgent({
      name,
      description: name,
      run: () => {
        runs.push(name);
        if (name === 'x' && state.xFails) throw new Error('x is down');
        return `${name} ok`;
      },
    }),
  );
  return { list, runs, state };
}

const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

describe('withBreaker', () => {
  it('bans an agent after N failures, hides it from the router, refuses a call to it, and lets one trial through after the cool-down', async () => {
    let clock = 1_000_000;
    const { list, runs, state } = agents();
    const options = { failures: 2, windowMs: 10_000, coolDownMs: 5_000, now: () => clock };
    const app = new App({ name: 'breaker', agents: list, logLevel: 'silent' }).mount(
      withBreaker(new PreferX(), options),
    );
    apps.push(app);

    expect((await app.chat({ message: '1' })).reply).toBe('x: error');
    expect((await app.chat({ message: '2' })).reply).toBe('x: error');
    const third = await app.chat({ message: '3' });
    expect(third.reply).toBe('y: ok');
    expect(third.steps[0]?.annotations).toEqual({ banned: ['x'] });
    expect(runs).toEqual(['x', 'x', 'y']);

    const stubborn = new App({ name: 'breaker', agents: list, logLevel: 'silent' }).mount(
      withBreaker(new PreferX(true), options),
    );
    apps.push(stubborn);
    // Another app (its own copy of the bans) on its own memory: x is not banned there.
    expect((await stubborn.chat({ message: 'a' })).reply).toBe('x: error');
    expect((await stubborn.chat({ message: 'b' })).reply).toBe('x: error');
    const refused = await stubborn.chat({ message: 'c' });
    expect(refused).toMatchObject({ status: 'failed', error: { code: 'agent_banned' } });
    expect(refused.reply).toMatch(/^Sorry, the x agent is unavailable/);
    expect(runs.filter((name) => name === 'x')).toHaveLength(4);

    // After the cool-down, one trial: it fails, so x is banned again at once.
    clock += 5_000;
    expect((await app.chat({ message: '4' })).reply).toBe('x: error');
    expect((await app.chat({ message: '5' })).reply).toBe('y: ok');
    // The next trial succeeds: x is back.
    clock += 5_000;
    state.xFails = false;
    expect((await app.chat({ message: '6' })).reply).toBe('x: ok');
    expect((await app.chat({ message: '7' })).reply).toBe('x: ok');
  });

  it('around a fallback chain: once the flaky agent is banned, the chain goes straight to the next one', async () => {
    const { list, runs } = agents();
    const app = new App({ name: 'chain', agents: list, logLevel: 'silent' }).mount(
      withBreaker(fallbackChain(list), { failures: 1 }),
    );
    apps.push(app);
    expect((await app.chat({ message: '1' })).reply).toBe('y ok');
    const second = await app.chat({ message: '2' });
    expect(second.reply).toBe('y ok');
    expect(runs).toEqual(['x', 'y', 'y']);
    expect(second.steps[0]).toMatchObject({
      calls: [{ agent: 'y' }],
      annotations: { banned: ['x'], attempt: 1, of: 1 },
    });
  });

  it('adds no awaited memory round trip to a turn: with the store’s breaker reads and writes held, turns still end', async () => {
    const store = new InMemoryMemoryStore();
    let gate: Promise<void> | undefined;
    let open = () => {};
    const held: string[] = [];
    const gated = new Proxy(store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          const key = args[1];
          if (gate && typeof key === 'string' && key.startsWith('breaker:')) {
            held.push(String(property));
            return gate.then(() => value.apply(target, args));
          }
          return value.apply(target, args);
        };
      },
    }) as MemoryStore;
    const { list, runs } = agents();
    const breaker = withBreaker(new PreferX(), { failures: 2, refreshMs: 0 });
    const app = new App({ name: 'held', agents: list, logLevel: 'silent', memoryStore: gated }).mount(
      breaker,
    );
    apps.push(app);
    // The tenant's first turn on this replica reads the bans once.
    await app.chat({ message: 'warm up' });
    gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    expect((await app.chat({ message: 'held 1' })).reply).toBe('x: error');
    // This replica's own copy already counts the failures it saw: the ban holds while the store waits.
    expect((await app.chat({ message: 'held 2' })).reply).toBe('y: ok');
    expect(runs).toEqual(['x', 'x', 'y']);
    expect(held).toContain('update');
    gate = undefined;
    open();
    await vi.waitFor(async () => {
      const stored = (await store.get('app', 'breaker:prefer-x')) as
        | { agents: Record<string, unknown> }
        | undefined;
      expect(Object.keys(stored?.agents ?? {})).toEqual(['x']);
    });
  });

  it('keeps its own failure when a background read answers before the write of it does', async () => {
    const store = new InMemoryMemoryStore();
    let release = () => {};
    const writesHeld = new Promise<void>((resolve) => {
      release = resolve;
    });
    // Writes wait; reads answer at once, so the refresh sent with the failure's write answers first, without it.
    const slowWrites = new Proxy(store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        return property === 'update'
          ? (...args: unknown[]) => writesHeld.then(() => value.apply(target, args))
          : (...args: unknown[]) => value.apply(target, args);
      },
    }) as MemoryStore;
    const { list, runs } = agents();
    const app = new App({ name: 'race', agents: list, logLevel: 'silent', memoryStore: slowWrites }).mount(
      withBreaker(new PreferX(), { failures: 1, refreshMs: 0 }),
    );
    apps.push(app);
    expect((await app.chat({ message: '1' })).reply).toBe('x: error');
    // x is banned here at once, though the store has not answered the write and a read came back without it.
    expect((await app.chat({ message: '2' })).reply).toBe('y: ok');
    expect(runs).toEqual(['x', 'y']);
    release();
  });

  it('keeps at most 100 agents’ records and 50 bans, and forgets failures outside the window', () => {
    const limits = { failures: 1, windowMs: 1_000, coolDownMs: 60_000, statsWindowMs: 1_000 };
    let state = EMPTY_STATE;
    for (let index = 0; index < 150; index++)
      state = applyOutcomes(state, [{ agent: `agent-${index}`, ok: false }], limits, 1_000 + index);
    const records = Object.values(state.agents);
    expect(records.length).toBeLessThanOrEqual(MAX_TRACKED_AGENTS);
    expect(records.filter((record) => record.bannedUntil !== undefined)).toHaveLength(MAX_BANNED_AGENTS);
    expect(state.agents['agent-149']?.bannedUntil).toBeDefined();

    const slow = { failures: 2, windowMs: 1_000, coolDownMs: 60_000, statsWindowMs: 1_000 };
    let windowed = applyOutcomes(EMPTY_STATE, [{ agent: 'x', ok: false }], slow, 0);
    windowed = applyOutcomes(windowed, [{ agent: 'x', ok: false }], slow, 1_500);
    expect(windowed.agents.x?.bannedUntil).toBeUndefined();
    windowed = applyOutcomes(windowed, [{ agent: 'x', ok: false }], slow, 1_600);
    expect(windowed.agents.x?.bannedUntil).toBe(61_600);
  });

  it('shares bans across two replicas on one Redis: B stops routing to x after A saw it fail; one trial after the cool-down', async () => {
    let clock = 2_000_000;
    const keyPrefix = redis.prefix();
    const options = { failures: 2, windowMs: 10_000, coolDownMs: 5_000, now: () => clock };
    const replica = () => {
      const team = agents();
      const app = new App({
        name: 'replica',
        agents: team.list,
        logLevel: 'silent',
        ...createRedisStores(REDIS_URL, { keyPrefix }),
      }).mount(withBreaker(new PreferX(), options));
      apps.push(app);
      return { app, runs: team.runs };
    };
    const a = replica();
    const b = replica();
    await a.app.chat({ message: '1' });
    await a.app.chat({ message: '2' });
    expect(a.runs).toEqual(['x', 'x']);
    // A records outcomes without waiting: the ban reaches Redis just after A's turn ends.
    await vi.waitFor(async () => {
      const keys = await redis.keys(keyPrefix);
      const values = await Promise.all(keys.map((key) => redis.admin.get(key).catch(() => null)));
      expect(values.some((value) => value?.includes('bannedUntil'))).toBe(true);
    });

    expect((await b.app.chat({ message: '3' })).reply).toBe('y: ok');
    expect(b.runs).toEqual(['y']);

    // After the cool-down both replicas want the trial at once: exactly one runs x, the other routes to y.
    clock += 5_000;
    const replies = await Promise.all([a.app.chat({ message: '4' }), b.app.chat({ message: '4' })]);
    expect(replies.map((reply) => reply.reply).sort()).toEqual(['x: error', 'y: ok']);
    expect([...a.runs, ...b.runs].filter((name) => name === 'x')).toHaveLength(3);
  });
});
