import { ROOT_CONTEXT, type Span, TraceFlags, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import {
  isSwitchboardSpan,
  ORIGINAL_PARENT_ATTRIBUTE,
  ReparentingSpanProcessor,
} from '../../src/tracing/reparenting-span-processor.js';

/** A provider whose export keeps only Switchboard's scopes, like the Langfuse export. */
function setup() {
  const exporter = new InMemorySpanExporter();
  const simple = new SimpleSpanProcessor(exporter);
  // The inner processor drops what the predicate rejects, as LangfuseSpanProcessor does with the same predicate.
  const inner: SpanProcessor = {
    onStart: (span, parentContext) => simple.onStart(span, parentContext),
    onEnd: (span) => {
      if (isSwitchboardSpan(span)) simple.onEnd(span);
    },
    forceFlush: () => simple.forceFlush(),
    shutdown: () => simple.shutdown(),
  };
  const processor = new ReparentingSpanProcessor({ processor: inner, keep: isSwitchboardSpan });
  const provider = new BasicTracerProvider({ spanProcessors: [processor] });
  const ours = provider.getTracer('switchboard');
  const observed = provider.getTracer('switchboard.observe');
  const http = provider.getTracer('@opentelemetry/instrumentation-http');
  const under = (parent: Span) => trace.setSpan(ROOT_CONTEXT, parent);
  return { exporter, processor, provider, ours, observed, http, under };
}

function byName(spans: ReadableSpan[], name: string): ReadableSpan {
  const span = spans.find((candidate) => candidate.name === name);
  if (!span) throw new Error(`no span named ${name} in ${spans.map((s) => s.name).join(', ')}`);
  return span;
}

function expectNoOrphans(spans: ReadableSpan[]): void {
  const ids = new Set(spans.map((span) => span.spanContext().spanId));
  for (const span of spans) {
    const parentId = span.parentSpanContext?.spanId;
    if (parentId !== undefined) expect(ids, `${span.name} points at a missing parent`).toContain(parentId);
  }
}

describe('ReparentingSpanProcessor', () => {
  let provider: BasicTracerProvider | undefined;
  afterEach(() => provider?.shutdown());

  it('moves a kept span from a dropped parent to its nearest kept ancestor', () => {
    const setupResult = setup();
    provider = setupResult.provider;
    const { exporter, ours, observed, http, under } = setupResult;
    const turn = ours.startSpan('turn', { root: true });
    const outgoing = http.startSpan('GET /lookup', undefined, under(turn));
    const parse = observed.startSpan('parse', undefined, under(outgoing));
    parse.end();
    outgoing.end();
    turn.end();

    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => span.name).sort()).toEqual(['parse', 'turn']);
    expectNoOrphans(spans);
    const exported = byName(spans, 'parse');
    expect(exported.parentSpanContext?.spanId).toBe(turn.spanContext().spanId);
    expect(exported.attributes[ORIGINAL_PARENT_ATTRIBUTE]).toBe(outgoing.spanContext().spanId);
    expect(exported.spanContext().traceId).toBe(turn.spanContext().traceId);
  });

  it('makes a kept span a root when no ancestor is kept, even if the parent ended first', () => {
    const setupResult = setup();
    provider = setupResult.provider;
    const { exporter, observed, http, under } = setupResult;
    const request = http.startSpan('POST /v1/chat', { root: true });
    const work = observed.startSpan('background work', undefined, under(request));
    request.end();
    work.end();

    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => span.name)).toEqual(['background work']);
    expect(spans[0]?.parentSpanContext).toBeUndefined();
  });

  it('leaves spans with kept parents and remote parents untouched, and forgets ended spans', () => {
    const setupResult = setup();
    provider = setupResult.provider;
    const { exporter, processor, ours, observed, under } = setupResult;
    const turn = ours.startSpan('turn', { root: true });
    const decision = ours.startSpan('route 0', undefined, under(turn));
    const pick = observed.startSpan('pick', undefined, under(decision));
    const remoteParent = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    const continued = ours.startSpan('continued', undefined, remoteParent);
    for (const span of [pick, decision, turn, continued]) span.end();

    const spans = exporter.getFinishedSpans();
    expect(byName(spans, 'pick').parentSpanContext?.spanId).toBe(decision.spanContext().spanId);
    expect(byName(spans, 'pick').attributes).not.toHaveProperty(ORIGINAL_PARENT_ATTRIBUTE);
    expect(byName(spans, 'route 0').parentSpanContext?.spanId).toBe(turn.spanContext().spanId);
    expect(byName(spans, 'continued').parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(processor.trackedSpans).toBe(0);
  });
});
