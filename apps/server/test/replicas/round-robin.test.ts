import { beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, useRedis } from '../../../../packages/runtime/test/support/redis.js';
import { type ChatOutcome, chat, type Replica, replyPid, useReplicas } from './support/replicas.js';

const redis = useRedis();
const replicas = useReplicas();

const TURNS = 300;
const CONCURRENCY = 30;
const AGENTS = ['alpha', 'beta', 'gamma'];

let servers: Replica[];

beforeAll(async () => {
  servers = await replicas.start(3, { REDIS_URL, KEY_PREFIX: redis.prefix(), ORCHESTRATOR: 'round-robin' });
}, 30_000);

describe('round-robin over three replicas sharing Redis', () => {
  it('spreads 300 turns within ±1 of equal across its three agents', async () => {
    const outcomes: ChatOutcome[] = [];
    for (let batch = 0; batch < TURNS / CONCURRENCY; batch += 1) {
      outcomes.push(
        ...(await Promise.all(
          Array.from({ length: CONCURRENCY }, (_, slot) => {
            const index = batch * CONCURRENCY + slot;
            return chat(servers[index % servers.length]!.url, { message: `turn ${index}` });
          }),
        )),
      );
    }

    expect(outcomes.filter((outcome) => outcome.status !== 200).map((outcome) => outcome.body)).toEqual([]);
    const counts = new Map(AGENTS.map((agent) => [agent, 0]));
    outcomes.forEach((outcome, index) => {
      const agent = outcome.body.steps?.[0]?.calls[0]?.agent ?? '(none)';
      // The reply is the chosen agent's, from the replica the request went to.
      expect(outcome.body.reply).toBe(`${agent} (pid ${servers[index % 3]!.pid})`);
      counts.set(agent, (counts.get(agent) ?? 0) + 1);
    });
    expect([...counts.keys()]).toEqual(AGENTS);
    for (const [agent, count] of counts) {
      expect(Math.abs(count - TURNS / AGENTS.length), `${agent} answered ${count} turns`).toBeLessThanOrEqual(
        1,
      );
    }
    expect(new Set(outcomes.map((outcome) => replyPid(outcome.body.reply))).size).toBe(3);
    // One shared counter: every turn, whichever replica ran it, took the next value exactly once.
    const positions = outcomes.map((outcome) =>
      Number(/round-robin turn (\d+)/.exec(outcome.body.steps?.[0]?.calls[0]?.reason ?? '')?.[1]),
    );
    expect(positions.sort((a, b) => a - b)).toEqual(Array.from({ length: TURNS }, (_, index) => index + 1));
  }, 30_000);
});
