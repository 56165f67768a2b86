import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { OBSERVE_TRACER_NAME, observe } from '../../src/tracing/observe.js';
import { useSpanRecording } from '../support/span-recording.js';

function only(spans: ReadableSpan[]): ReadableSpan {
  expect(spans).toHaveLength(1);
  return spans[0]!;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('observe', () => {
  const recording = useSpanRecording();

  it('wraps a sync function: same result, input and output recorded, name from the function', () => {
    const add = observe(function add(a: number, b: number) {
      return a + b;
    });
    expect(add(2, 3)).toBe(5);
    const span = only(recording().named('add'));
    expect(span.instrumentationScope.name).toBe(OBSERVE_TRACER_NAME);
    expect(span.attributes).toMatchObject({
      'langfuse.observation.type': 'span',
      'langfuse.observation.input': '[2,3]',
      'langfuse.observation.output': '5',
    });
  });

  it('ends an async function span when its promise settles, and nests spans started inside it', async () => {
    const inner = observe(async (text: string) => text.toUpperCase(), { name: 'inner' });
    const outer = observe(
      async (request: { text: string }) => {
        await sleep(5);
        return `${await inner(request.text)}!`;
      },
      { name: 'outer', type: 'chain' },
    );
    await expect(outer({ text: 'hi' })).resolves.toBe('HI!');
    const outerSpan = only(recording().named('outer'));
    const innerSpan = only(recording().named('inner'));
    expect(innerSpan.parentSpanContext?.spanId).toBe(outerSpan.spanContext().spanId);
    expect(outerSpan.attributes['langfuse.observation.type']).toBe('chain');
    expect(outerSpan.attributes['langfuse.observation.input']).toBe('{"text":"hi"}');
    expect(outerSpan.attributes['langfuse.observation.output']).toBe('"HI!"');
    const durationMs = outerSpan.duration[0] * 1000 + outerSpan.duration[1] / 1e6;
    expect(durationMs).toBeGreaterThanOrEqual(4);
  });

  it('nests under the active span, e.g. the decision span the engine makes active', () => {
    const decision = trace.getTracer('switchboard').startSpan('route 0');
    const pick = observe(() => 'billing', { name: 'pick' });
    context.with(trace.setSpan(context.active(), decision), pick);
    decision.end();
    expect(only(recording().named('pick')).parentSpanContext?.spanId).toBe(decision.spanContext().spanId);
  });

  it('records a throw and a rejection as errors and passes them on unchanged', async () => {
    const failure = new Error('boom');
    const throwing = observe(
      () => {
        throw failure;
      },
      { name: 'throwing' },
    );
    const rejecting = observe(async () => Promise.reject(failure), { name: 'rejecting' });
    expect(() => throwing()).toThrow(failure);
    await expect(rejecting()).rejects.toBe(failure);
    for (const span of [only(recording().named('throwing')), only(recording().named('rejecting'))]) {
      expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'boom' });
      expect(span.events[0]?.attributes?.['exception.message']).toBe('boom');
      expect(span.ended).toBe(true);
    }
  });

  it('leaves input and output out when asked, and survives unserialisable values', () => {
    const secret = observe((password: string) => password.length, {
      name: 'secret',
      captureInput: false,
      captureOutput: false,
    });
    expect(secret('hunter2')).toBe(7);
    expect(only(recording().named('secret')).attributes).not.toHaveProperty('langfuse.observation.input');
    expect(only(recording().named('secret')).attributes).not.toHaveProperty('langfuse.observation.output');

    const cyclic: Record<string, unknown> = { big: 10n };
    cyclic.self = cyclic;
    observe((value: unknown) => value, { name: 'cyclic' })(cyclic);
    expect(only(recording().named('cyclic')).attributes['langfuse.observation.input']).toBe(
      '{"big":"10","self":"[Circular]"}',
    );
  });

  it('as a method decorator keeps `this`, names the span after the method, and honours the options', async () => {
    class Router {
      prefix = 'agent:';
      async selectAgent(text: string): Promise<string> {
        return `${this.prefix}${text.includes('refund') ? 'billing' : 'faq'}`;
      }
    }
    // What `@observe()` does at class definition time, applied by hand (see observe-decorator.test.ts for the syntax).
    const decorate = observe();
    const decorated = decorate(Router.prototype.selectAgent, {
      kind: 'method',
      name: 'selectAgent',
    } as ClassMethodDecoratorContext<Router, (this: Router, text: string) => Promise<string>>);
    const named = observe({ name: 'choose', captureOutput: false })(Router.prototype.selectAgent, {
      kind: 'method',
      name: 'selectAgent',
    } as ClassMethodDecoratorContext<Router, (this: Router, text: string) => Promise<string>>);

    const router = new Router();
    await expect(decorated.call(router, 'refund please')).resolves.toBe('agent:billing');
    await expect(named.call(router, 'hours?')).resolves.toBe('agent:faq');
    expect(only(recording().named('selectAgent')).attributes['langfuse.observation.output']).toBe(
      '"agent:billing"',
    );
    expect(only(recording().named('choose')).attributes).not.toHaveProperty('langfuse.observation.output');
  });
});

describe('observe with tracing off', () => {
  it('only calls through: same results, no serialisation', async () => {
    let serialised = 0;
    const value = {
      toJSON: () => {
        serialised++;
        return 'x';
      },
    };
    const sync = observe((input: typeof value) => input);
    const async = observe(async (input: typeof value) => input);
    expect(sync(value)).toBe(value);
    await expect(async(value)).resolves.toBe(value);
    expect(serialised).toBe(0);
  });
});
