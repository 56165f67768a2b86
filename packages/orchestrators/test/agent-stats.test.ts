import {
  AbstractOrchestrator,
  type AgentStatsTable,
  type Conversation,
  latestToolResults,
  rankByStats,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import { type Agent, App, apiKeys, defineAgent } from '@switchboard/runtime';
import { createRedisStores, RedisMemoryStore, RedisSessionStore } from '@switchboard/runtime/redis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { expositionProblems, parseSamples } from '../../runtime/test/support/prometheus-text.js';
import { REDIS_URL, useRedis } from '../../runtime/test/support/redis.js';
import { startTcpProxy, type TcpProxy } from '../../runtime/test/support/tcp-proxy.js';
import {
  MAX_SAMPLES_PER_AGENT,
  MAX_STATS_AGENTS,
  recordSamples,
  type SampleTable,
  summarise,
} from '../src/breaker-stats.js';
import { withBreaker } from '../src/index.js';

const redis = useRedis();

/**
 * Calls whichever of `a` and `b` the stats rank first (a tie — no stats —
 * keeps `a` first), then answers with the reply; remembers the stats it read.
 */
class TieRouter extends AbstractOrchestrator {
  readonly seen: Array<AgentStatsTable | undefined> = [];
  constructor() {
    super({
      name: 'tie',
      agents: [
        { name: 'a', description: 'a' },
        { name: 'b', description: 'b' },
      ],
    });
  }
  protected handleMessage(conversation: Conversation) {
    const [reply] = latestToolResults(conversation);
    if (reply) return routeToUser(`${reply.name}: ${reply.status}`);
    this.seen.push(conversation.agentStats);
    const [best] = rankByStats(conversation, ['a', 'b']);
    return toolCall(best as string, 'go');
  }
}

/** `a` answers at once (or fails while `state.aFails`); `b` awaits a 25 ms timer first. */
function team() {
  const state = { aFails: true };
  const list: Agent[] = [
    defineAgent({
      name: 'a',
      description: 'a',
      run: () => {
        if (state.aFails) throw new Error('a is down');
        return 'a ok';
      },
    }),
    defineAgent({
      name: 'b',
      description: 'b',
      run: async () => {
        await new Promise((resolve) => setTimeout(resolve, 25));
        return 'b ok';
      },
    }),
  ];
  return { list, state };
}

async function agentsBody(app: App): Promise<{ agents: unknown[]; stats?: AgentStatsTable }> {
  const response = await app.request('/v1/agents');
  expect(response.status).toBe(200);
  return (await response.json()) as { agents: unknown[]; stats?: AgentStatsTable };
}

const apps: App[] = [];
const proxies: TcpProxy[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
  await Promise.all(proxies.splice(0).map((proxy) => proxy.stop()));
});

describe('agent stats (pure)', () => {
  it('computes the success rate, error codes and nearest-rank p50/p95', () => {
    const calls = Array.from({ length: 20 }, (_, index) => ({
      agent: 'x',
      ok: index % 4 !== 0,
      code: index % 8 === 0 ? 'agent_timeout' : 'agent_error',
      ms: index + 1,
    }));
    let table: SampleTable = {};
    for (const call of calls) table = recordSamples(table, [call], 60_000, 1_000);
    expect(summarise(table, 60_000, 1_000)).toEqual({
      x: {
        calls: 20,
        successRate: 0.75,
        errors: { agent_timeout: 3, agent_error: 2 },
        p50Ms: 10,
        p95Ms: 19,
      },
    });
  });

  it('lets old calls fall out of the window, and keeps at most 32 calls per agent and 100 agents', () => {
    let table = recordSamples({}, [{ agent: 'old', ok: false, code: 'agent_error', ms: 5 }], 1_000, 0);
    table = recordSamples(table, [{ agent: 'new', ok: true, ms: 7 }], 1_000, 600);
    expect(Object.keys(summarise(table, 1_000, 999))).toEqual(['old', 'new']);
    // At 1 000 the first call is a full window old: it is gone, from the summary and from the next write.
    expect(Object.keys(summarise(table, 1_000, 1_000))).toEqual(['new']);
    table = recordSamples(table, [{ agent: 'new', ok: true, ms: 9 }], 1_000, 1_000);
    expect(Object.keys(table)).toEqual(['new']);

    let many: SampleTable = {};
    for (let index = 0; index < 150; index++)
      many = recordSamples(many, [{ agent: `agent-${index}`, ok: true, ms: index }], 60_000, 1_000 + index);
    for (let index = 0; index < 40; index++)
      many = recordSamples(many, [{ agent: 'agent-149', ok: index >= 30, ms: index }], 60_000, 2_000 + index);
    expect(Object.keys(many)).toHaveLength(MAX_STATS_AGENTS);
    expect(many['agent-0']).toBeUndefined();
    expect(many['agent-149']).toHaveLength(MAX_SAMPLES_PER_AGENT);
    // The last 32 calls of agent-149: 22 failures (8..29) and 10 successes.
    expect(summarise(many, 60_000, 3_000)['agent-149']).toMatchObject({ calls: 32, successRate: 10 / 32 });
  });

  it('ignores what a stored record holds that is not a call', () => {
    const corrupt = { x: [[1, 2, 0], 'nonsense', [1, 'slow', 0]], y: 'nope' } as unknown as SampleTable;
    expect(summarise(corrupt, 1_000, 500)).toEqual({
      x: { calls: 1, successRate: 1, errors: {}, p50Ms: 2, p95Ms: 2 },
    });
  });
});

describe('agent stats through withBreaker', () => {
  it('are read by a router to break a tie, shown on GET /v1/agents and in the metrics, and forgotten after the window', async () => {
    let clock = 5_000_000;
    const { list, state } = team();
    const router = new TieRouter();
    const app = new App({ name: 'stats', agents: list, logLevel: 'silent', metrics: true }).mount(
      withBreaker(router, { failures: 10, statsWindowMs: 60_000, now: () => clock }),
    );
    apps.push(app);

    expect((await app.chat({ message: '1' })).reply).toBe('a: error');
    // a failed its one call: the router now ranks b first.
    expect((await app.chat({ message: '2' })).reply).toBe('b: ok');
    expect(router.seen[0]).toEqual({});
    expect(router.seen[1]).toEqual({
      a: expect.objectContaining({ calls: 1, successRate: 0, errors: { agent_error: 1 } }),
    });
    expect(Object.keys(router.seen[1]?.a ?? {})).toEqual([
      'calls',
      'successRate',
      'errors',
      'p50Ms',
      'p95Ms',
    ]);

    state.aFails = false;
    clock += 1_000;
    // The stats are written without waiting: GET /v1/agents reads them from the store once they are there.
    await vi.waitFor(async () => expect((await agentsBody(app)).stats?.b?.calls).toBe(1));
    const { stats } = await agentsBody(app);
    expect(stats?.a).toMatchObject({ calls: 1, successRate: 0, errors: { agent_error: 1 } });
    expect(stats?.b).toMatchObject({ calls: 1, successRate: 1, errors: {} });
    expect(stats?.b?.p50Ms).toBeGreaterThanOrEqual(20);

    const text = await (await app.request('/metrics')).text();
    const samples = parseSamples(text);
    expect(expositionProblems(text)).toEqual([]);
    const gauge = (name: string, labels: Record<string, string>) =>
      samples.find(
        (sample) =>
          sample.name === name &&
          Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
      )?.value;
    expect(gauge('switchboard_agent_success_rate', { agent: 'a' })).toBe(0);
    expect(gauge('switchboard_agent_success_rate', { agent: 'b' })).toBe(1);
    expect(gauge('switchboard_agent_latency_seconds', { agent: 'b', quantile: '0.95' })).toBeGreaterThan(0);

    // A window later a's failure is forgotten: a tie again, and a (now healthy) goes first.
    clock += 60_000;
    expect((await app.chat({ message: '3' })).reply).toBe('a: ok');
    expect(router.seen[2]).toEqual({});
    await vi.waitFor(async () => expect((await agentsBody(app)).stats?.a?.calls).toBe(1));
    const later = await agentsBody(app);
    expect(later.stats).toEqual({
      a: { calls: 1, successRate: 1, errors: {}, p50Ms: expect.any(Number), p95Ms: expect.any(Number) },
    });
    // b's latency is known, a's too: the slow agent's median is the larger.
    expect(later.stats?.a?.p50Ms).toBeLessThan(stats?.b?.p50Ms as number);
  });

  it('are per tenant: a tenant sees only its own calls, on GET /v1/agents and on the conversation', async () => {
    const ACME = 'sk-acme-0123456789abcdef0123456789abcdef';
    const GLOBEX = 'sk-globex-0123456789abcdef0123456789abcd';
    const router = new TieRouter();
    const app = new App({
      name: 'tenants',
      agents: team().list,
      logLevel: 'silent',
      auth: apiKeys({ keys: { [ACME]: { tenantId: 'acme' }, [GLOBEX]: { tenantId: 'globex' } } }),
    }).mount(withBreaker(router, { failures: 10 }));
    apps.push(app);
    const chat = async (key: string) => {
      const response = await app.request('/v1/chat', {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'go' }),
      });
      return ((await response.json()) as { reply: string }).reply;
    };
    const statsOf = async (key: string) =>
      (
        (await (await app.request('/v1/agents', { headers: { authorization: `Bearer ${key}` } })).json()) as {
          stats?: AgentStatsTable;
        }
      ).stats;
    expect(await chat(ACME)).toBe('a: error');
    await vi.waitFor(async () => expect((await statsOf(ACME))?.a?.calls).toBe(1));
    expect(await statsOf(GLOBEX)).toEqual({});
    // Globex's router has no stats of its own yet: a tie, a first.
    expect(await chat(GLOBEX)).toBe('a: error');
    expect(router.seen[1]).toEqual({});
  });

  it('without withBreaker: no stats on the conversation nor on GET /v1/agents', async () => {
    const { list } = team();
    const router = new TieRouter();
    const app = new App({ name: 'plain', agents: list, logLevel: 'silent' }).mount(router);
    apps.push(app);
    expect((await app.chat({ message: '1' })).reply).toBe('a: error');
    expect((await app.chat({ message: '2' })).reply).toBe('a: error');
    expect(router.seen).toEqual([undefined, undefined]);
    expect(await agentsBody(app)).not.toHaveProperty('stats');
    // The OpenAPI document describes the field all the same.
    const openApi = (await (await app.request('/openapi.json')).json()) as {
      paths: Record<string, { get: { responses: Record<string, unknown> } }>;
    };
    expect(JSON.stringify(openApi.paths['/v1/agents']?.get.responses['200'])).toMatch(
      /"stats":\{[\s\S]*"successRate"[\s\S]*"p95Ms"/,
    );
  });

  it('are shared by two replicas on one Redis: B ranks by what A saw and shows it on GET /v1/agents', async () => {
    const keyPrefix = redis.prefix();
    const replica = () => {
      const router = new TieRouter();
      const app = new App({
        name: 'replica',
        agents: team().list,
        logLevel: 'silent',
        ...createRedisStores(REDIS_URL, { keyPrefix }),
      }).mount(withBreaker(router, { failures: 10 }));
      apps.push(app);
      return { app, router };
    };
    const a = replica();
    const b = replica();
    expect((await a.app.chat({ message: '1' })).reply).toBe('a: error');
    await vi.waitFor(async () =>
      expect((await agentsBody(b.app)).stats).toEqual({
        a: expect.objectContaining({ calls: 1, successRate: 0, errors: { agent_error: 1 } }),
      }),
    );
    // B's first turn reads the tenant's record once: a's failure on A decides B's tie.
    expect((await b.app.chat({ message: '2' })).reply).toBe('b: ok');
    expect(b.router.seen[0]?.a).toMatchObject({ successRate: 0 });
    await vi.waitFor(async () => expect((await agentsBody(a.app)).stats?.b?.calls).toBe(1));
  });

  it('add no awaited round trip to a turn: with the memory store’s Redis held, turns end on the two session round trips', async () => {
    const keyPrefix = redis.prefix();
    const target = new URL(REDIS_URL);
    const upstream = { host: target.hostname, port: Number(target.port || 6379) };
    const sessionsProxy = await startTcpProxy(upstream);
    const memoryProxy = await startTcpProxy(upstream);
    proxies.push(sessionsProxy, memoryProxy);
    const app = new App({
      name: 'held-stats',
      agents: team().list,
      logLevel: 'silent',
      sessionStore: new RedisSessionStore(`redis://127.0.0.1:${sessionsProxy.port}`, { keyPrefix }),
      memoryStore: new RedisMemoryStore(`redis://127.0.0.1:${memoryProxy.port}`, { keyPrefix }),
    }).mount(withBreaker(new TieRouter(), { failures: 10, refreshMs: 0 }));
    apps.push(app);
    // Warm-up: connects, loads the scripts, and reads the tenant's record once (the one awaited read).
    expect((await app.chat({ sessionId: 'warm-up', message: 'go' })).reply).toBe('a: error');

    memoryProxy.resetCount();
    memoryProxy.hold();
    const roundTrips: number[] = [];
    for (const sessionId of ['s1', 's2', 's3']) {
      sessionsProxy.resetCount();
      expect((await app.chat({ sessionId, message: 'go' })).reply).toBe('b: ok');
      roundTrips.push(sessionsProxy.roundTrips);
    }
    // The Redis guide's two round trips of a single-hop turn, none waiting on the memory store.
    expect(roundTrips).toEqual([2, 2, 2]);
    memoryProxy.resume();
    await vi.waitFor(async () => expect((await agentsBody(app)).stats?.b?.calls).toBe(3));
  });
});
