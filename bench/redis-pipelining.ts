// ioredis auto-pipelining on and off, for the Redis store's turn path: CPU per turn of churn turns run one
// at a time (a quiet server) and 32 at a time (a loaded one), in process, against the local Redis. Blocks
// alternate between the two settings so that machine noise hits both.
//   BENCH_PIPELINE_TURNS (default 6000)  turns per setting and concurrency
import { randomBytes } from 'node:crypto';
import { App } from '@switchboard/runtime';
import { createRedisStores } from '@switchboard/runtime/redis';
import { Redis } from 'ioredis';
import { churnAgents, churnMessage, churnSession } from './churn-workload.js';
import { deleteKeys } from './redis-keys.js';
import { benchOrchestrator } from './servers/orchestrator.js';

/** CPU µs per turn with auto-pipelining on and off, by how many turns run at once. */
export interface PipeliningResult {
  turns: number;
  sequential: { on: number; off: number };
  concurrent: { on: number; off: number };
}

function redisApp(url: string, keyPrefix: string, autoPipelining: boolean): App {
  const client = new Redis(url, {
    lazyConnect: true,
    enableAutoPipelining: autoPipelining,
    maxRetriesPerRequest: 1,
  });
  const app = new App({
    name: 'bench-pipelining',
    agents: churnAgents(),
    logger: () => {},
    ...createRedisStores(client, { keyPrefix }),
  });
  const close = app.close.bind(app);
  app.close = async () => {
    await close();
    client.disconnect();
  };
  return app.mount(benchOrchestrator(app));
}

export async function measurePipelining(
  url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  turns = Number(process.env.BENCH_PIPELINE_TURNS ?? 6_000),
): Promise<PipeliningResult> {
  const keyPrefix = `switchboard-bench-pipe:${randomBytes(4).toString('hex')}:`;
  const apps = { on: redisApp(url, keyPrefix, true), off: redisApp(url, keyPrefix, false) };
  const cpu = { sequential: { on: 0, off: 0 }, concurrent: { on: 0, off: 0 } };
  const block = 1_000;
  try {
    for (const app of Object.values(apps))
      for (let index = 0; index < 300; index++)
        await app.chat({ sessionId: churnSession('warm', index), message: churnMessage(index) });
    for (let done = 0; done < turns; done += block) {
      for (const setting of ['on', 'off'] as const) {
        const app = apps[setting];
        let start = process.cpuUsage();
        for (let index = done; index < done + block; index++)
          await app.chat({ sessionId: churnSession(`s-${setting}`, index), message: churnMessage(index) });
        let used = process.cpuUsage(start);
        cpu.sequential[setting] += used.user + used.system;
        start = process.cpuUsage();
        let next = done;
        const worker = async () => {
          while (next < done + block) {
            const index = next++;
            await app.chat({ sessionId: churnSession(`c-${setting}`, index), message: churnMessage(index) });
          }
        };
        await Promise.all(Array.from({ length: 32 }, worker));
        used = process.cpuUsage(start);
        cpu.concurrent[setting] += used.user + used.system;
      }
    }
  } finally {
    await Promise.all([apps.on.close(), apps.off.close()]);
    await deleteKeys(url, keyPrefix);
  }
  const per = (micros: number) => micros / turns;
  return {
    turns,
    sequential: { on: per(cpu.sequential.on), off: per(cpu.sequential.off) },
    concurrent: { on: per(cpu.concurrent.on), off: per(cpu.concurrent.off) },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await measurePipelining(), null, 2));
}
