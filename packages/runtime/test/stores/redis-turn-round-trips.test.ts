import {
  AbstractOrchestrator,
  type Conversation,
  currentUserMessage,
  type Decision,
  latestToolResults,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import { App } from '../../src/app.js';
import { createRedisStores, RedisTurnEventLog } from '../../src/redis.js';
import { REDIS_URL, useRedis } from '../support/redis.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

/**
 * docs/guides/redis-replicas.md, "Scaling out with Redis": a single-hop turn waits for Redis twice: one script takes the lease,
 * stores the user message and reads the window; one stores the agent's reply, the answer and the turn
 * record and releases the lease.
 */
const DOCUMENTED_ROUND_TRIPS_PER_TURN = 2;

const redis = useRedis();

/**
 * The single-hop turn of the Redis guide (what `KeywordOrchestrator` does for a
 * message naming one agent): call the echo agent with the user's text, then
 * answer the user with its reply. `@switchboard/orchestrators` is not a
 * dependency of the runtime package, hence this stand-in.
 */
class EchoThenAnswer extends AbstractOrchestrator {
  protected handleMessage(conversation: Conversation): Decision {
    const [result] = latestToolResults(conversation);
    if (result) return routeToUser(result.content, { reason: 'the echo agent answered' });
    return toolCall('echo', currentUserMessage(conversation).content, { reason: 'echo keyword' });
  }
}

/** Answers after real I/O waits (a timer), as an agent calling a service does. */
const echo = defineAgent({
  name: 'echo',
  description: 'Repeats the message',
  keywords: ['echo'],
  run: async (message) => {
    await new Promise((resolve) => setTimeout(resolve, 2));
    return `echo: ${message}`;
  },
});

describe('Redis round trips of a real turn through App.chat()', () => {
  let proxy: TcpProxy | undefined;
  let logProxy: TcpProxy | undefined;
  let app: App | undefined;
  afterEach(async () => {
    await app?.close();
    await proxy?.stop();
    await logProxy?.stop();
    app = undefined;
    proxy = undefined;
    logProxy = undefined;
  });

  it(`costs the ${DOCUMENTED_ROUND_TRIPS_PER_TURN} round trips the Redis guide states for every single-hop turn, with an agent that awaits I/O`, async () => {
    const target = new URL(REDIS_URL);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    // The turns' event log writes through a proxy of its own: it is counted apart from the stores.
    logProxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    const keyPrefix = redis.prefix();
    const eventLog = new RedisTurnEventLog(`redis://127.0.0.1:${logProxy.port}`, { keyPrefix });
    app = new App({
      name: 'round-trips',
      agents: [echo],
      logger: () => {},
      ...createRedisStores(`redis://127.0.0.1:${proxy.port}`, { keyPrefix }),
      eventLog,
    }).mount(EchoThenAnswer);

    // Warm-up: connects, loads the Lua scripts. Not a turn the guide counts.
    expect((await app.chat({ sessionId: 'warm-up', message: 'echo warm up' })).reply).toBe(
      'echo: echo warm up',
    );

    const sessions = ['rt-a', 'rt-b', 'rt-c'];
    const perTurn: Array<{
      sessionId: string;
      turn: number;
      roundTrips: number;
      sessionScripts: number;
      sessionCommands: number;
    }> = [];
    // Scripts run on the session's own keys: each names its messages and then its turns key (EVAL or EVALSHA).
    const sessionScripts = (sent: string, sessionId: string) =>
      sent.match(
        new RegExp(
          `session:\\{${sessionId}\\}:messages\\r\\n\\$\\d+\\r\\n[^\\r]*session:\\{${sessionId}\\}:turns`,
          'g',
        ),
      )?.length ?? 0;
    // Every command of the session store that names the session: its two scripts; the sweeper's marks and
    // the session index's touch go in them, not in commands of their own. (The test's messages hold no line
    // breaks.)
    const sessionCommands = (sent: string, sessionId: string) =>
      sent
        .split(/\*\d+\r\n\$\d+\r\n/)
        .filter((command) => command.includes(sessionId) && !command.includes(':memory')).length;
    for (let turn = 1; turn <= 3; turn++) {
      for (const sessionId of sessions) {
        proxy.resetCount();
        logProxy.resetCount();
        const result = await app.chat({ sessionId, message: `echo ${sessionId} ${turn}` });
        await eventLog.idle();
        // The turn's 7 events reached the log in batches: one script call after the answer, one more for
        // each 50 ms the turn ran (on a loaded machine, up to one per event; the batching itself is tested
        // in turn-event-log.test.ts).
        const logWrites = logProxy.sent.match(/:events:/g)?.length ?? 0;
        expect(logWrites).toBeGreaterThanOrEqual(1);
        expect(logWrites).toBeLessThanOrEqual(7);
        const logged = await eventLog.replay(
          { tenantId: undefined, sessionId, turnId: result.turnId },
          undefined,
        );
        expect(logged.kind === 'events' && logged.events.map((event) => event.type)).toEqual([
          'turn-start',
          'route',
          'agent-start',
          'agent-end',
          'route',
          'message',
          'turn-end',
        ]);
        perTurn.push({
          sessionId,
          turn,
          roundTrips: proxy.roundTrips,
          sessionScripts: sessionScripts(proxy.sent, sessionId),
          sessionCommands: sessionCommands(proxy.sent, sessionId),
        });
        expect(result).toMatchObject({ status: 'completed', reply: `echo: echo ${sessionId} ${turn}` });
        expect(result.steps.map((step) => step.kind)).toEqual(['call', 'answer']);
      }
    }

    // Each turn on its own (first turn of a session and later ones alike), not just on average: two round
    // trips, and two scripts on the session (the reply goes with the answer, not in a script of its own).
    expect(perTurn).toEqual(
      perTurn.map(({ sessionId, turn }) => ({
        sessionId,
        turn,
        roundTrips: DOCUMENTED_ROUND_TRIPS_PER_TURN,
        sessionScripts: 2,
        sessionCommands: 2,
      })),
    );

    // The turns really went through Redis: each session holds its 3 × (user, tool, assistant) messages.
    for (const sessionId of sessions) expect(await app.sessions.read(sessionId)).toHaveLength(9);
    expect((await redis.keys(keyPrefix)).length).toBeGreaterThan(0);
  });

  it('stores the reply while a slow orchestrator decides, before its answer', async () => {
    const keyPrefix = redis.prefix();
    let decided: (() => void) | undefined;
    const deciding = new Promise<void>((resolve) => {
      decided = resolve;
    });
    let asked: (() => void) | undefined;
    const askedAgain = new Promise<void>((resolve) => {
      asked = resolve;
    });
    class SlowSecondDecision extends AbstractOrchestrator {
      protected async handleMessage(conversation: Conversation): Promise<Decision> {
        const [result] = latestToolResults(conversation);
        if (!result) return toolCall('echo', currentUserMessage(conversation).content);
        asked?.();
        // A router that asks a model: its decision takes a while.
        await deciding;
        return routeToUser(result.content);
      }
    }
    const stores = createRedisStores(REDIS_URL, { keyPrefix });
    app = new App({ name: 'slow-router', agents: [echo], logger: () => {}, ...stores }).mount(
      SlowSecondDecision,
    );
    const turn = app.chat({ sessionId: 'slow', message: 'echo slowly' });
    await askedAgain;
    // Read by another connection, as another replica would.
    const reader = createRedisStores(REDIS_URL, { keyPrefix }).sessionStore;
    try {
      await expect
        .poll(async () => (await reader.read('slow')).map((message) => message.role))
        .toEqual(['user', 'tool']);
      decided?.();
      expect((await turn).reply).toBe('echo: echo slowly');
      expect((await reader.read('slow')).map((message) => message.role)).toEqual([
        'user',
        'tool',
        'assistant',
      ]);
    } finally {
      decided?.();
      await reader.close();
    }
  });
});
