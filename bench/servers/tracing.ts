import type { Shutdownable } from '@switchboard/runtime';
import { setupTracing } from '@switchboard/runtime/otel';

/**
 * Tracing off by default. With BENCH_TRACING=1 every span is exported the way
 * a Langfuse user's would be, to the loopback sink at BENCH_OTLP_URL.
 */
export async function benchTracing(): Promise<Shutdownable | undefined> {
  if (process.env.BENCH_TRACING !== '1') return undefined;
  const baseUrl = process.env.BENCH_OTLP_URL;
  if (!baseUrl) throw new Error('BENCH_TRACING=1 needs BENCH_OTLP_URL');
  const tracing = setupTracing({
    env: {},
    langfuse: {
      publicKey: 'pk-bench',
      secretKey: 'sk-bench',
      baseUrl,
      flushAt: 512,
      flushInterval: 1,
      protocol: process.env.BENCH_TRACE_PROTOCOL === 'http/json' ? 'http/json' : 'http/protobuf',
    },
  });
  if (!tracing.enabled) throw new Error('tracing could not be enabled');
  return tracing;
}
