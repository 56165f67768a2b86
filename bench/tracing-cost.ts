// In-process CPU of a traced turn against an untraced one, on the churn workload (a new session every 3 turns,
// async agents, keyword routing), with the real export path: setupTracing() and its Langfuse processor
// posting OTLP to a loopback receiver in another process (which only counts requests: Langfuse's ingestion
// is not this process's work). Without BENCH_TRACE_ONLY, blocks of turns alternate between the two apps in one
// process; each side's figure is its median block.
//   BENCH_TRACE_TURNS (default 30000)  turns a side
//   BENCH_TRACE_PROTOCOL (default http/protobuf)  how spans travel to the receiver: http/protobuf, http/json, or
//     dropped (handed to an exporter that drops them: the spans' own cost, without the export), or spans-only
//     (no Langfuse processor: the provider's only processor ignores every span; what recording the spans costs)
//   BENCH_TRACE_SAMPLE_RATE  setupTracing's sampleRate (default: every turn traced)
//   BENCH_TRACE_ONLY=traced (or untraced)  runs only that side (bench/run.ts runs each side in a process of its own)
//   BENCH_OTLP_SINK_SCRIPT  the compiled receiver (bench/run.ts passes it: compiled, this file cannot compile it)
// bench/run.ts runs it compiled, one side per process, five rounds of every configuration; run alone
// (`tsx bench/tracing-cost.ts`, or `node --cpu-prof` on its compiled form) it prints JSON.

import { fork } from 'node:child_process';
import { type ContextManager, context, trace } from '@opentelemetry/api';
import { App, type AppOptions } from '@switchboard/runtime';
import { setupTracing } from '@switchboard/runtime/otel';
import { churnAgents, churnMessage, churnSession } from './churn-workload.js';
import { compileServer } from './compile.js';
import { median } from './load.js';
import { benchOrchestrator } from './servers/orchestrator.js';

/** CPU per turn, traced and untraced, and how many export requests the receiver got. */
export interface TracingCost {
  turns: number;
  cpuMicrosPerTurn: { traced: number; untraced: number };
  exportRequests: number;
}

function app(options: Partial<AppOptions> = {}): App {
  const created = new App({ name: 'bench-trace', agents: churnAgents(), logger: () => {}, ...options });
  return created.mount(benchOrchestrator(created));
}

/** The loopback OTLP receiver of bench/servers/otlp-sink.ts, in a process of its own. */
async function startSink(): Promise<{ url: string; requestCount(): Promise<number>; close(): void }> {
  // Compiled by the caller when this runs compiled (its own path then no longer leads to the sources).
  const sink = fork(process.env.BENCH_OTLP_SINK_SCRIPT ?? (await compileServer('servers/otlp-sink.ts')), {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve) =>
    sink.once('message', (message: { ready: string }) => resolve(message.ready)),
  );
  return {
    url,
    requestCount: () =>
      new Promise<number>((resolve) => {
        sink.once('message', (message: { count: number }) => resolve(message.count));
        sink.send('count');
      }),
    close: () => sink.kill('SIGTERM'),
  };
}

/** How spans leave the process: OTLP as JSON or protobuf, or to an exporter that drops them. */
export type TracingProtocol = 'http/json' | 'http/protobuf' | 'dropped' | 'spans-only';

function protocolFromEnv(): TracingProtocol {
  const asked = process.env.BENCH_TRACE_PROTOCOL;
  return asked === 'http/json' || asked === 'dropped' || asked === 'spans-only' ? asked : 'http/protobuf';
}

/** An exporter that drops every batch: what tracing costs before the export itself. */
const dropEverything = {
  export: (_spans: unknown, done: (result: { code: number }) => void) => done({ code: 0 }),
  shutdown: async () => {},
  forceFlush: async () => {},
};

/**
 * Measures `turns` traced and untraced turns, spans sent as `protocol`, or,
 * with `'dropped'`, handed to an exporter that drops them (the spans, the
 * Langfuse processor and the batching are paid; the serialisation and the
 * HTTP export are not).
 */
export async function measureTracingCost(
  turns = Number(process.env.BENCH_TRACE_TURNS ?? 30_000),
  protocol: TracingProtocol = protocolFromEnv(),
): Promise<TracingCost> {
  const receiver = await startSink();
  const ignoreEverything = {
    onStart() {},
    onEnd() {},
    shutdown: async () => {},
    forceFlush: async () => {},
  };
  const sampleRate = process.env.BENCH_TRACE_SAMPLE_RATE;
  const tracing = setupTracing({
    env: {},
    ...(sampleRate ? { sampleRate: Number(sampleRate) } : {}),
    ...(protocol === 'spans-only' ? { spanProcessors: [ignoreEverything] } : {}),
    langfuse:
      protocol === 'spans-only'
        ? false
        : {
            publicKey: 'pk-bench',
            secretKey: 'sk-bench',
            baseUrl: receiver.url,
            flushAt: 512,
            flushInterval: 1,
            ...(protocol === 'dropped' ? { exporter: dropEverything as never } : { protocol }),
          },
  });
  const provider = tracing.provider;
  if (!provider) throw new Error('tracing could not be enabled');
  // Tracing is global: the untraced blocks run with the provider and the context manager setupTracing()
  // registered both unregistered, and the traced ones with those very two registered again.
  const contextManager = (
    context as unknown as { _getContextManager(): ContextManager }
  )._getContextManager();
  const setTraced = (on: boolean) => {
    trace.disable();
    context.disable();
    if (on) {
      trace.setGlobalTracerProvider(provider);
      context.setGlobalContextManager(contextManager);
    }
  };
  const traced = app({ tracing });
  const untraced = app();
  const block = 2_500;
  const only = process.env.BENCH_TRACE_ONLY;
  const onlySide = only === 'traced' || only === 'untraced' ? only : undefined;
  // CPU per block of each side: the median block leaves out the blocks a major GC or a noisy neighbour hit.
  const cpu = { traced: [] as number[], untraced: [] as number[] };
  // Warm-up: the measured paths compiled before measuring (only the measured side's, when only one is: the
  // other would leave the shared functions compiled for both, as no process that traces or does not would).
  for (let index = 0; index < 2_000; index++) {
    if (onlySide !== 'untraced') {
      setTraced(true);
      await traced.chat({ sessionId: churnSession('w-t', index), message: churnMessage(index) });
    }
    if (onlySide !== 'traced') {
      setTraced(false);
      await untraced.chat({ sessionId: churnSession('w-u', index), message: churnMessage(index) });
    }
  }
  for (let done = 0; done < turns; done += block) {
    for (const [name, target] of [
      ['traced', traced],
      ['untraced', untraced],
    ] as const) {
      if (onlySide !== undefined && name !== onlySide) continue;
      setTraced(name === 'traced');
      const start = process.cpuUsage();
      for (let index = done; index < done + block; index++)
        await target.chat({ sessionId: churnSession(name, index), message: churnMessage(index) });
      const used = process.cpuUsage(start);
      cpu[name].push((used.user + used.system) / block);
    }
  }
  setTraced(true);
  await tracing.forceFlush();
  await Promise.all([traced.close(), untraced.close()]);
  await tracing.shutdown();
  const exportRequests = await receiver.requestCount();
  receiver.close();
  return {
    turns,
    cpuMicrosPerTurn: { traced: median(cpu.traced), untraced: median(cpu.untraced) },
    exportRequests,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await measureTracingCost();
  // Run by bench/run.ts (over IPC), or alone.
  if (process.send) process.send({ result });
  else {
    const { traced, untraced } = result.cpuMicrosPerTurn;
    console.log(JSON.stringify({ ...result, ratio: traced / untraced }, null, 2));
  }
}
