import { randomBytes } from 'node:crypto';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import { App } from '../../src/app.js';
import { createRedisStores, RedisMemoryStore, RedisSessionStore } from '../../src/redis.js';
import { memoryNamespace } from '../../src/stores/memory-binding.js';
import { memoryKeys, sessionKeys } from '../../src/stores/redis/redis-keys.js';
import { sessionStoreId } from '../../src/stores/tenant-sessions.js';
import { relay, ScriptedOrchestrator } from '../support/app-fixtures.js';
import { startTestCluster, type TestCluster } from '../support/redis-cluster.js';
import { describeMemoryStoreContract } from './memory-store.contract.js';
import { describeSessionStoreContract } from './session-store.contract.js';

// The Redis suite's contracts and a real turn, on a three-node Redis Cluster the test starts itself.
let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startTestCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

const prefix = () => `sbcluster:${randomBytes(6).toString('hex')}:`;

describeSessionStoreContract(
  'redis cluster',
  ({ idleTtlSeconds }) => new RedisSessionStore(cluster.nodes, { keyPrefix: prefix(), idleTtlSeconds }),
);
describeMemoryStoreContract(
  'redis cluster',
  () => new RedisMemoryStore(cluster.nodes, { keyPrefix: prefix() }),
);

const echo = defineAgent({
  name: 'echo',
  description: 'Repeats the message after awaiting I/O',
  run: async (message) => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    return `echo: ${message}`;
  },
});

describe('Switchboard on a Redis Cluster', () => {
  it("keeps a session's memory in its session's slot, with or without a tenant", async () => {
    const keyPrefix = prefix();
    for (const tenantId of [undefined, 'acme:eu']) {
      const session = sessionKeys(keyPrefix, sessionStoreId('ses:1', tenantId));
      const memory = memoryKeys(keyPrefix, memoryNamespace('session', { sessionId: 'ses:1', tenantId }));
      const slots = await Promise.all(
        [session.messages, session.lease, memory.index, `${memory.valuePrefix}cart`, memory.renewable].map(
          (key) => cluster.admin.cluster('KEYSLOT', key),
        ),
      );
      expect(new Set(slots).size).toBe(1);
    }
  });

  it('spreads sessions over the nodes and serves each from any replica', async () => {
    const keyPrefix = prefix();
    const client = new Cluster([...cluster.nodes], { lazyConnect: true, enableAutoPipelining: true });
    // Two replicas: one from the nodes, one from an ioredis Cluster of the caller's.
    const replicas = [
      new App({
        name: 'a',
        agents: [echo],
        logLevel: 'silent',
        ...createRedisStores(cluster.nodes, { keyPrefix }),
      }),
      new App({ name: 'b', agents: [echo], logLevel: 'silent', ...createRedisStores(client, { keyPrefix }) }),
    ];
    for (const app of replicas) app.mount(new ScriptedOrchestrator([echo], relay()));
    try {
      const sessions = Array.from({ length: 12 }, (_, index) => `cl-${index}`);
      for (const [index, sessionId] of sessions.entries()) {
        const first = await replicas[index % 2]!.chat({ sessionId, message: `hello ${index}` });
        const second = await replicas[(index + 1) % 2]!.chat({ sessionId, message: `again ${index}` });
        expect([first.reply, second.reply]).toEqual([`echo: hello ${index}`, `echo: again ${index}`]);
      }
      // Both replicas read each session's whole history, written by both.
      for (const sessionId of sessions) {
        expect(await replicas[0]!.sessions.read(sessionId)).toHaveLength(6);
        expect((await replicas[1]!.sessions.listTurns(sessionId)).map((turn) => turn.status)).toEqual([
          'completed',
          'completed',
        ]);
      }
      // The sessions' keys landed on every node, each session's keys on one.
      const perNode = await Promise.all(
        cluster.admin.nodes('master').map((node) => node.keys(`${keyPrefix}session:*`)),
      );
      expect(perNode.every((keys) => keys.length > 0)).toBe(true);
      const listed = await replicas[0]!.request('/v1/sessions?limit=100');
      const { sessions: summaries } = (await listed.json()) as { sessions: Array<{ sessionId: string }> };
      expect(summaries.map((summary) => summary.sessionId).sort()).toEqual([...sessions].sort());
      expect((await replicas[1]!.request('/v1/sessions/cl-0', { method: 'DELETE' })).status).toBe(204);
      expect(await replicas[0]!.sessions.read('cl-0')).toEqual([]);
      // Readiness reads the policy from a node (the test's cluster does not evict).
      for (const app of replicas)
        expect(await (await app.request('/readyz')).json()).toEqual({ status: 'ready' });
    } finally {
      await Promise.all(replicas.map((app) => app.close()));
      client.disconnect();
    }
  });
});
