// The stream-relay variant's in-process part (bench/streaming-relay.ts): how long, in one process with no
// network between client and relay, from the start of a request to the moment the `openai` client creates
// the model's request (undici's `undici:request:create`), for the same llmAgent turn asked four ways:
//   direct   the `openai` client's own streamed call (what a hand-written relay does first)
//   chat     app.chat() (the engine: turn opening, routing, the agent call)
//   json     POST /v1/chat through app.request() (the app's route on top)
//   sse      the same with `stream: true` (the streamed route)
// Medians over sequential turns after a warm-up; run in a child by bench/streaming-relay.ts, which prints
// them. Run alone, it prints them as JSON.
// `idle` repeats `direct` and `sse` each after 50 ms with nothing to do, as a relay is between turns while
// the stream-relay bench times its first deltas (it waits for the model's 50 ms first token). On this
// machine everything then costs about three times as much, the openai client's own call as well: a thread
// that blocked 50 ms (Atomics.wait, no JavaScript at all) finds its caches cold, while 5 ms costs little.
import diagnostics from 'node:diagnostics_channel';
import { createScriptedModelServer } from '@switchboard/runtime/testing';
import OpenAI from 'openai';
import { median } from './load.js';
import { streamApp } from './servers/stream-app.js';

type Way = 'direct' | 'chat' | 'json' | 'sse';

/** Median ms from a request's start to the model's request, each way (see the file's comment). */
export type FirstHop = Record<Way, number> & {
  /** The same after 50 ms idle (see the file's comment). */
  idle: Record<'direct' | 'sse', number>;
};

const IDLE_MS = 50;

async function measure(turns: number, idleTurns: number): Promise<FirstHop> {
  const model = await createScriptedModelServer({ fallback: 'a reply of a few words' });
  const { app, orchestrator } = streamApp('bench-first-hop', model.url);
  app.mount(orchestrator);
  const client = new OpenAI({ apiKey: 'sk-bench', baseURL: model.url, maxRetries: 0 });
  let askedAt = 0;
  const onCreate = () => {
    if (askedAt === 0) askedAt = performance.now();
  };
  diagnostics.subscribe('undici:request:create', onCreate);
  const timed = async (work: () => Promise<unknown>) => {
    askedAt = 0;
    const start = performance.now();
    await work();
    return askedAt - start;
  };
  const route = (stream: boolean) => async () =>
    (
      await app.request('/v1/chat', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'write something', stream }),
      })
    ).text();
  const ways: Record<Way, () => Promise<unknown>> = {
    direct: async () => {
      const stream = await client.chat.completions.create({
        model: 'bench-model',
        messages: [{ role: 'user', content: 'write something' }],
        stream: true,
      });
      for await (const _ of stream);
    },
    chat: () => app.chat({ message: 'write something' }),
    json: route(false),
    sse: route(true),
  };
  const names = Object.keys(ways) as Array<Way>;
  const times = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<Way, number[]>;
  const idle = { direct: [] as number[], sse: [] as number[] };
  try {
    for (let index = 0; index < 2 * turns; index++) {
      for (const name of names) {
        const ms = await timed(ways[name]);
        // The first half warms the code up.
        if (index >= turns) times[name].push(ms);
      }
    }
    for (let index = 0; index < idleTurns; index++) {
      for (const name of ['direct', 'sse'] as const) {
        await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
        idle[name].push(await timed(ways[name]));
      }
    }
  } finally {
    diagnostics.unsubscribe('undici:request:create', onCreate);
    await app.close();
    await model.close();
  }
  return {
    ...(Object.fromEntries(names.map((name) => [name, median(times[name])])) as Omit<FirstHop, 'idle'>),
    idle: { direct: median(idle.direct), sse: median(idle.sse) },
  };
}

const result = await measure(
  Number(process.env.BENCH_FIRST_HOP_TURNS ?? 500),
  Number(process.env.BENCH_FIRST_HOP_IDLE_TURNS ?? 60),
);
if (process.send) process.send({ result });
else console.log(JSON.stringify(result));
