// History stays flat: a turn on a session holding 10 000 messages against a turn on a 10-message session, in
// memory and on Redis, in the same run, turns interleaved in blocks of 50; each figure is the median block. Both sessions are seeded through the
// store's own `append`, in bulk. Run compiled in a child process by bench/run.ts (BENCH_VARIANTS=history);
// run alone it prints its results as JSON.
//   BENCH_HISTORY_MESSAGES (default 10000)  messages stored in the big session before the measured turns
//   BENCH_HISTORY_TURNS (default 4000)  measured turns of each kind in memory (half of it on Redis), the
//     big ones spread over 4 big sessions
import { randomBytes } from 'node:crypto';
import type { MessageItem } from '@switchboard/core';
import { InMemorySessionStore, type SessionStore } from '@switchboard/runtime';
import { createRedisStores } from '@switchboard/runtime/redis';
import { churnApp, churnMessage, churnSession } from './churn-workload.js';
import { median } from './load.js';
import { deleteKeys } from './redis-keys.js';

/** Cost per turn on the big and the small session of one store. */
export interface FlatnessResult {
  store: 'memory' | 'redis';
  messages: number;
  turns: number;
  big: { cpuMicros: number; wallMicros: number };
  small: { cpuMicros: number; wallMicros: number };
}

const BLOCK = 50;
/** Big sessions, taken in turn, so that each grows by a quarter of the measured turns only. */
const BIG_SESSIONS = 4;

/** `count` messages as the engine stores them: user, agent reply, answer, repeated. */
function seedMessages(sessionId: string, count: number): MessageItem[] {
  const createdAt = new Date().toISOString();
  return Array.from({ length: count }, (_, index): MessageItem => {
    const id = `${sessionId}-seed-${index}`;
    const turn = Math.floor(index / 3);
    if (index % 3 === 0) return { id, role: 'user', content: churnMessage(turn), createdAt };
    const toolCallId = `${sessionId}-call-${turn}`;
    if (index % 3 === 1)
      return {
        id,
        role: 'tool',
        name: 'billing',
        toolCallId,
        content: 'billing: 40 characters read',
        status: 'ok',
        createdAt,
      };
    return { id, role: 'assistant', toolCallId, content: 'billing: 40 characters read', createdAt };
  });
}

async function seed(store: SessionStore, sessionId: string, count: number): Promise<void> {
  const messages = seedMessages(sessionId, count);
  for (let start = 0; start < messages.length; start += 500)
    await store.append(sessionId, messages.slice(start, start + 500));
}

async function measureStore(
  store: 'memory' | 'redis',
  stores: { sessionStore: SessionStore },
  messages: number,
  turns: number,
): Promise<FlatnessResult> {
  const app = churnApp(stores);
  const measuredTurns = Math.ceil(turns / BLOCK) * BLOCK;
  try {
    for (let index = 0; index < BIG_SESSIONS; index++)
      await seed(stores.sessionStore, `big-${index}`, messages);
    // One small session per measured turn, so that each holds 10 messages (13 at its measured turn, after the
    // unmeasured turn that warms it the way the big session is warm): small sessions must not grow.
    for (let index = 0; index < measuredTurns; index++) await seed(stores.sessionStore, `small-${index}`, 10);
    const chat = async (sessionId: string, index: number) => {
      const result = await app.chat({ sessionId, message: churnMessage(index) });
      if (result.status !== 'completed') throw new Error(`turn on ${sessionId} ended ${result.status}`);
    };
    for (let index = 0; index < 600; index++) await chat(churnSession('warm', index), index);
    for (let index = 0; index < BLOCK; index++) await chat(`big-${index % BIG_SESSIONS}`, index);
    // Per block, so that the median can leave out the blocks a major GC of the whole heap happened to land in.
    const blocks = {
      big: { cpu: [] as number[], wall: [] as number[] },
      small: { cpu: [] as number[], wall: [] as number[] },
    };
    const block = async (kind: 'big' | 'small', from: number) => {
      const cpu = process.cpuUsage();
      const started = performance.now();
      for (let index = from; index < from + BLOCK; index++)
        await chat(kind === 'big' ? `big-${index % BIG_SESSIONS}` : `small-${index}`, index);
      const used = process.cpuUsage(cpu);
      blocks[kind].wall.push(performance.now() - started);
      blocks[kind].cpu.push(used.user + used.system);
    };
    for (let from = 0; from < measuredTurns; from += BLOCK) {
      for (let index = from; index < from + BLOCK; index++) await chat(`small-${index}`, index);
      // Which kind goes first alternates, so that whatever the block before leaves behind (a GC, Redis
      // writing its replies out) falls on both alike.
      const order = (from / BLOCK) % 2 === 0 ? (['big', 'small'] as const) : (['small', 'big'] as const);
      for (const kind of order) await block(kind, from);
    }
    const per = ({ cpu, wall }: { cpu: number[]; wall: number[] }) => ({
      cpuMicros: median(cpu) / BLOCK,
      wallMicros: (median(wall) * 1000) / BLOCK,
    });
    return { store, messages, turns: measuredTurns, big: per(blocks.big), small: per(blocks.small) };
  } finally {
    await app.close();
  }
}

/** Turn cost on a big session against a small one, in memory and (when reachable) on Redis. */
async function measureFlatness(redisUrl: string, messages: number, turns: number) {
  const results: FlatnessResult[] = [
    await measureStore('memory', { sessionStore: new InMemorySessionStore() }, messages, turns),
  ];
  const keyPrefix = `switchboard-bench-history:${randomBytes(4).toString('hex')}:`;
  let redisError: string | undefined;
  try {
    results.push(
      await measureStore(
        'redis',
        createRedisStores(redisUrl, { keyPrefix }),
        messages,
        Math.max(BLOCK, turns / 2),
      ),
    );
  } catch (error) {
    redisError = (error as Error).message;
  } finally {
    await deleteKeys(redisUrl, keyPrefix).catch(() => {});
  }
  return { results, redisError };
}

const flatness = await measureFlatness(
  process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  Number(process.env.BENCH_HISTORY_MESSAGES ?? 10_000),
  Number(process.env.BENCH_HISTORY_TURNS ?? 4_000),
);
if (process.send) process.send({ flatness });
else console.log(JSON.stringify(flatness, null, 2));
