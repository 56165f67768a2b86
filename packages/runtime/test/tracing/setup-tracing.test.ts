import { trace } from '@opentelemetry/api';
import { ConfigurationError } from '@switchboard/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOtlpReceiver, type OtlpReceiver } from '../../src/testing/otlp-receiver.js';
import { recordSpans } from '../../src/testing/span-recorder.js';
import { observe } from '../../src/tracing/observe.js';
import { setupTracing } from '../../src/tracing/setup-tracing.js';

const isRecording = () => {
  const span = trace.getTracer('probe').startSpan('probe');
  span.end();
  return span.isRecording();
};

describe('setupTracing', () => {
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await createOtlpReceiver();
  });
  afterAll(() => receiver.close());

  it('does nothing when nothing is configured', async () => {
    const tracing = setupTracing({ env: {} });
    expect(tracing.enabled).toBe(false);
    expect(tracing.destinations).toEqual([]);
    expect(isRecording()).toBe(false);
    await tracing.shutdown();
  });

  it('fails early on half a Langfuse key pair or an unusable OTLP protocol', () => {
    expect(() => setupTracing({ env: { LANGFUSE_PUBLIC_KEY: 'pk-lf-1' } })).toThrow(
      /LANGFUSE_SECRET_KEY is missing/,
    );
    expect(() => setupTracing({ env: { LANGFUSE_SECRET_KEY: 'sk-lf-1' } })).toThrow(ConfigurationError);
    expect(() =>
      setupTracing({
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
      }),
    ).toThrow(/Unsupported OTLP protocol 'grpc'/);
    expect(isRecording()).toBe(false);
  });

  it('sends JSON when OTEL_EXPORTER_OTLP_PROTOCOL asks for it, the same spans to the same path', async () => {
    receiver.reset();
    const tracing = setupTracing({
      env: {
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/custom/traces`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      },
    });
    trace
      .getTracer('my-app')
      .startSpan('one', { attributes: { answer: 42 } })
      .end();
    await tracing.shutdown();
    expect(receiver.requests.map((request) => [request.path, request.headers['content-type']])).toEqual([
      ['/custom/traces', 'application/json'],
    ]);
    expect(receiver.spans().map((span) => [span.name, span.attributes.answer])).toEqual([['one', 42]]);
  });

  it('reads an empty variable as unset, as an env file with `NAME=` lines gives it', async () => {
    receiver.reset();
    const tracing = setupTracing({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: '',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      },
    });
    expect(tracing).toMatchObject({ enabled: true, destinations: ['otlp'] });
    trace.getTracer('my-app').startSpan('kept').end();
    await tracing.shutdown();
    expect(receiver.requests.map((request) => [request.path, request.headers['content-type']])).toEqual([
      ['/v1/traces', 'application/json'],
    ]);
  });

  it('exports every span to OTEL_EXPORTER_OTLP_ENDPOINT, keeps context across awaits, and unregisters on shutdown', async () => {
    receiver.reset();
    const tracing = setupTracing({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.url}/`, OTEL_SERVICE_NAME: 'svc' },
    });
    expect(tracing).toMatchObject({ enabled: true, destinations: ['otlp'] });

    const child = observe(async () => 'done', { name: 'child' });
    await trace.getTracer('my-app').startActiveSpan('parent', async (parent) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      await child();
      parent.end();
    });
    await tracing.forceFlush();

    const spans = receiver.spans();
    expect(receiver.requests[0]?.path).toBe('/v1/traces');
    expect(receiver.requests[0]?.headers['content-type']).toBe('application/x-protobuf');
    const parent = spans.find((span) => span.name === 'parent');
    expect(parent?.resource['service.name']).toBe('svc');
    expect(spans.find((span) => span.name === 'child')?.parentSpanId).toBe(parent?.spanId);

    await tracing.shutdown();
    await tracing.shutdown();
    expect(isRecording()).toBe(false);
    const recording = recordSpans();
    await recording.shutdown();
  });

  it('leaves a provider registered by someone else alone and says what to do instead', async () => {
    const recording = recordSpans();
    const warnings: string[] = [];
    const tracing = setupTracing({
      env: { LANGFUSE_PUBLIC_KEY: 'pk', LANGFUSE_SECRET_KEY: 'sk', LANGFUSE_BASE_URL: receiver.url },
      onWarning: (message) => warnings.push(message),
    });
    expect(tracing.enabled).toBe(false);
    expect(warnings.join()).toMatch(/switchboardSpanProcessor\(\)/);
    trace.getTracer('still-theirs').startSpan('theirs').end();
    await tracing.shutdown();
    expect(recording.named('theirs')).toHaveLength(1);
    await recording.shutdown();
  });
});
