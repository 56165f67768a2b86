// Counts the Redis round trips of a single-hop turn on the wire, through a TCP proxy in front of Redis.
import { randomBytes } from 'node:crypto';
import { KeywordOrchestrator } from '@switchboard/orchestrators';
import { App, defineAgent } from '@switchboard/runtime';
import { createRedisStores } from '@switchboard/runtime/redis';
import { startTcpProxy } from '../packages/runtime/test/support/tcp-proxy.js';
import { deleteKeys } from './redis-keys.js';

/** Average Redis round trips per turn over `turns` sequential single-hop turns. */
export async function measureRoundTrips(redisUrl: string, turns = 200): Promise<number> {
  const target = new URL(redisUrl);
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
  const keyPrefix = `switchboard-bench-rt:${randomBytes(4).toString('hex')}:`;
  const echo = defineAgent({
    name: 'echo',
    description: 'Repeats',
    keywords: ['echo'],
    run: (message) => message,
  });
  const app = new App({
    name: 'rt',
    agents: [echo],
    ...createRedisStores(`redis://127.0.0.1:${proxy.port}`, { keyPrefix }),
  });
  app.mount(new KeywordOrchestrator({ name: 'rt', agents: app.agentMetas }));
  try {
    await app.chat({ sessionId: 'warm-up', message: 'echo warm up' });
    proxy.resetCount();
    for (let index = 0; index < turns; index++)
      await app.chat({ sessionId: `rt-${index % 8}`, message: `echo ${index}` });
    return proxy.roundTrips / turns;
  } finally {
    await app.close();
    await proxy.stop();
    await deleteKeys(redisUrl, keyPrefix);
  }
}
