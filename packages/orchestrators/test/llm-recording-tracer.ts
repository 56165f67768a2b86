import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import {
  type Context,
  type ContextManager,
  context,
  ROOT_CONTEXT,
  type Span,
  type SpanAttributes,
  type SpanAttributeValue,
  type SpanContext,
  type SpanStatus,
  TraceFlags,
  type Tracer,
  trace,
} from '@opentelemetry/api';

/** A finished span as the recorder keeps it. */
export interface RecordedSpan {
  name: string;
  scope: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Record<string, SpanAttributeValue>;
  status?: SpanStatus;
  ended: boolean;
}

class RecordingSpan implements Span {
  readonly record: RecordedSpan;
  readonly #context: SpanContext;

  constructor(record: RecordedSpan, traceId: string) {
    this.record = record;
    this.#context = { traceId, spanId: record.spanId, traceFlags: TraceFlags.SAMPLED };
  }
  spanContext(): SpanContext {
    return this.#context;
  }
  setAttribute(key: string, value: SpanAttributeValue): this {
    this.record.attributes[key] = value;
    return this;
  }
  setAttributes(attributes: SpanAttributes): this {
    for (const [key, value] of Object.entries(attributes))
      if (value !== undefined) this.record.attributes[key] = value;
    return this;
  }
  addEvent(): this {
    return this;
  }
  addLink(): this {
    return this;
  }
  addLinks(): this {
    return this;
  }
  setStatus(status: SpanStatus): this {
    this.record.status = status;
    return this;
  }
  updateName(name: string): this {
    this.record.name = name;
    return this;
  }
  end(): void {
    this.record.ended = true;
  }
  isRecording(): boolean {
    return !this.record.ended;
  }
  recordException(): void {}
}

class AsyncContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    active: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#storage.run(active, () => fn.call(thisArg, ...args));
  }
  bind<T>(_context: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.#storage.disable();
    return this;
  }
}

/**
 * A minimal in-memory OpenTelemetry tracer for this package's tests (the SDK
 * is not one of its dependencies): it registers globally, records every span
 * with its scope, parent and attributes, and propagates the active context.
 */
export class RecordingTracer {
  readonly spans: RecordedSpan[] = [];

  register(): void {
    context.setGlobalContextManager(new AsyncContextManager());
    trace.setGlobalTracerProvider({ getTracer: (scope) => this.#tracer(scope) });
  }

  unregister(): void {
    trace.disable();
    context.disable();
  }

  /** Runs `fn` inside a new active span named `name`, which ends afterwards. */
  async inSpan<T>(name: string, fn: () => Promise<T>): Promise<{ result: T; span: RecordedSpan }> {
    const span = trace.getTracer('test').startSpan(name, undefined, context.active()) as RecordingSpan;
    try {
      const result = await context.with(trace.setSpan(context.active(), span), fn);
      return { result, span: span.record };
    } finally {
      span.end();
    }
  }

  #tracer(scope: string): Tracer {
    const startSpan = (name: string, _options?: unknown, parent: Context = context.active()): Span => {
      const parentSpan = trace.getSpan(parent)?.spanContext();
      const record: RecordedSpan = {
        name,
        scope,
        spanId: randomBytes(8).toString('hex'),
        parentSpanId: parentSpan?.spanId,
        attributes: {},
        ended: false,
      };
      this.spans.push(record);
      return new RecordingSpan(record, parentSpan?.traceId ?? randomBytes(16).toString('hex'));
    };
    const startActiveSpan = (name: string, ...rest: unknown[]) => {
      const fn = rest.at(-1) as (span: Span) => unknown;
      const span = startSpan(name);
      return context.with(trace.setSpan(context.active(), span), () => fn(span));
    };
    return { startSpan, startActiveSpan } as Tracer;
  }
}
