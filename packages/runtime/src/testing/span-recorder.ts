import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ConfigurationError } from '@switchboard/core';
import { hasGlobalTracerProvider, registerGlobally } from '../tracing/global-provider.js';

/** The spans recorded by {@link recordSpans}. */
export interface SpanRecording {
  /** Every span that ended since the start or the last `reset()`, in the order they ended. */
  readonly spans: ReadableSpan[];
  /** The ended spans with this name. */
  named(name: string): ReadableSpan[];
  /** The recorded parent of `span`, if it ended and was recorded. */
  parentOf(span: ReadableSpan): ReadableSpan | undefined;
  /** Forgets the spans recorded so far. */
  reset(): void;
  /** Unregisters the provider (and the context manager it registered), so another recording can start. */
  shutdown(): Promise<void>;
}

/**
 * Records spans in memory for a test: registers a global tracer provider
 * with an in-memory exporter (and an AsyncLocalStorage context manager, if
 * none is registered) until `shutdown()`. Fails if a provider is already
 * registered — shut the previous recording down first (e.g. in `afterEach`).
 *
 * @example
 * ```ts
 * const recording = recordSpans();
 * afterEach(() => recording.reset());
 * afterAll(() => recording.shutdown());
 *
 * await app.chat({ message: 'hi' });
 * const [turn] = recording.named('support');
 * expect(turn?.attributes['session.id']).toBeDefined();
 * ```
 */
export function recordSpans(): SpanRecording {
  if (hasGlobalTracerProvider()) {
    throw new ConfigurationError({
      message:
        'recordSpans(): a tracer provider is already registered; shut down the previous recording (or setupTracing handle) first',
    });
  }
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const unregister = registerGlobally(provider);
  let stopping: Promise<void> | undefined;
  return {
    get spans() {
      return exporter.getFinishedSpans();
    },
    named: (name) => exporter.getFinishedSpans().filter((span) => span.name === name),
    parentOf: (span) => {
      const parentId = span.parentSpanContext?.spanId;
      if (parentId === undefined) return undefined;
      return exporter.getFinishedSpans().find((candidate) => candidate.spanContext().spanId === parentId);
    },
    reset: () => exporter.reset(),
    shutdown: () => {
      stopping ??= provider.shutdown().finally(unregister);
      return stopping;
    },
  };
}
