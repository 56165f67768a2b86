import { EventEmitter } from 'node:events';
import { type Context, context, createContextKey, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { RequestContext } from '@switchboard/core';
import { traceContextSlot } from '@switchboard/core/internal';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOtlpReceiver, type OtlpReceiver } from '../../src/testing/otlp-receiver.js';
import { setupTracing, type TracingHandle } from '../../src/tracing/setup-tracing.js';

// The context manager setupTracing() registers keeps the trace context in the RequestContext's own
// AsyncLocalStorage: both must follow every await and callback as if each had a storage of its own.

const key = createContextKey('test.value');
const tick = () => new Promise((resolve) => setTimeout(resolve, 1));
const request = (sessionId: string) =>
  new RequestContext({
    sessionId,
    requestId: `req_${sessionId}`,
    signal: new AbortController().signal,
    memory: () => {
      throw new Error('no memory in this test');
    },
  });

let receiver: OtlpReceiver;
let tracing: TracingHandle;
beforeEach(async () => {
  receiver = await createOtlpReceiver();
  tracing = setupTracing({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } });
});
afterEach(async () => {
  await tracing.shutdown();
  await receiver.close();
});

describe('one async context for the request and the trace', () => {
  it('keeps the request context inside any trace context, and the trace context inside a request', async () => {
    const outer = request('outer');
    await RequestContext.run(outer, async () => {
      await context.with(ROOT_CONTEXT.setValue(key, 'a'), async () => {
        await tick();
        expect(RequestContext.current()).toBe(outer);
        expect(context.active().getValue(key)).toBe('a');
        // One storage: the trace context lives beside the request context, not in a second AsyncLocalStorage.
        expect(traceContextSlot.get()).toBe(context.active());
        // A new request inside keeps the trace context; leaving it restores the outer request.
        const inner = request('inner');
        await RequestContext.run(inner, async () => {
          await tick();
          expect(RequestContext.current()).toBe(inner);
          expect(context.active().getValue(key)).toBe('a');
        });
        expect(RequestContext.current()).toBe(outer);
        // Even the root context (no span, no values) keeps the request.
        await context.with(ROOT_CONTEXT, async () => {
          await tick();
          expect(RequestContext.current()).toBe(outer);
          expect(context.active().getValue(key)).toBeUndefined();
        });
        expect(context.active().getValue(key)).toBe('a');
      });
      expect(context.active()).toBe(ROOT_CONTEXT);
      expect(RequestContext.current()).toBe(outer);
    });
    expect(RequestContext.tryCurrent()).toBeUndefined();
  });

  it('keeps concurrent requests and their spans apart', async () => {
    const seen: string[] = [];
    await Promise.all(
      ['one', 'two', 'three'].map((name, index) =>
        RequestContext.run(request(name), () =>
          trace.getTracer('test').startActiveSpan(name, async (span) => {
            for (let step = 0; step < 3; step++) {
              await new Promise((resolve) => setTimeout(resolve, (3 - index) * 2));
              const active = trace.getActiveSpan() as unknown as { name: string } | undefined;
              seen.push(`${RequestContext.current().sessionId}/${active?.name}`);
            }
            span.end();
          }),
        ),
      ),
    );
    expect(seen.sort()).toEqual([
      'one/one',
      'one/one',
      'one/one',
      'three/three',
      'three/three',
      'three/three',
      'two/two',
      'two/two',
      'two/two',
    ]);
  });

  it('binds functions and event emitters to a context, as OpenTelemetry instrumentations use them', async () => {
    const bound = context.bind(ROOT_CONTEXT.setValue(key, 'bound'), () => context.active().getValue(key));
    expect(bound()).toBe('bound');
    const emitter = context.bind(ROOT_CONTEXT.setValue(key, 'emitter'), new EventEmitter());
    const heard = new Promise((resolve) => emitter.on('ping', () => resolve(context.active().getValue(key))));
    setTimeout(() => emitter.emit('ping'), 1);
    expect(await heard).toBe('emitter');
  });

  it('attaches a context for the rest of the current execution and restores the previous one on dispose', async () => {
    const manager = (
      context as unknown as {
        _getContextManager(): { attach(ctx: Context): { dispose(): void } };
      }
    )._getContextManager();
    const outer = request('attached');
    await RequestContext.run(outer, async () => {
      const token = manager.attach(ROOT_CONTEXT.setValue(key, 'attached'));
      await tick();
      expect(context.active().getValue(key)).toBe('attached');
      expect(RequestContext.current()).toBe(outer);
      token.dispose();
      token.dispose();
      expect(context.active().getValue(key)).toBeUndefined();
      expect(RequestContext.current()).toBe(outer);
    });
  });

  it('exports spans nested across awaits under a request', async () => {
    await RequestContext.run(request('nested'), () =>
      trace.getTracer('test').startActiveSpan('parent', async (parent) => {
        await tick();
        trace.getTracer('test').startSpan('child').end();
        parent.end();
      }),
    );
    await tracing.forceFlush();
    const spans = receiver.spans();
    const parent = spans.find((span) => span.name === 'parent');
    expect(spans.find((span) => span.name === 'child')?.parentSpanId).toBe(parent?.spanId);
  });
});
