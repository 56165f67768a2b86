import { SpanKind, trace } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  AbstractOrchestrator,
  type Conversation,
  latestToolResults,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import { App } from '../../src/app.js';
import { createOtlpReceiver, type OtlpReceiver } from '../../src/testing/otlp-receiver.js';
import type { OtlpSpan } from '../../src/testing/otlp-spans.js';
import { switchboardSpanProcessor } from '../../src/tracing/langfuse-processor.js';
import { observe } from '../../src/tracing/observe.js';
import { ORIGINAL_PARENT_ATTRIBUTE } from '../../src/tracing/reparenting-span-processor.js';
import { setupTracing } from '../../src/tracing/setup-tracing.js';

class EchoOrchestrator extends AbstractOrchestrator {
  protected handleMessage(conversation: Conversation) {
    const [reply] = latestToolResults(conversation);
    return reply ? routeToUser(reply.content) : toolCall('echo', 'hello', { reason: 'echo everything' });
  }
}

const echo = defineAgent({ name: 'echo', description: 'Echoes', run: (message) => message });

describe("alongside a user's own NodeSDK", () => {
  let receiver: OtlpReceiver;
  let sdk: NodeSDK;
  const everything = new InMemorySpanExporter();
  const warnings: string[] = [];
  let traceId: string | undefined;
  let httpSpanId = '';
  let spans: OtlpSpan[] = [];
  let everythingNames: string[] = [];

  beforeAll(async () => {
    vi.stubEnv('OTEL_LOGS_EXPORTER', 'none');
    receiver = await createOtlpReceiver();
    const userProcessor = new SimpleSpanProcessor(everything);
    const langfuse = switchboardSpanProcessor({ publicKey: 'pk', secretKey: 'sk', baseUrl: receiver.url });
    sdk = new NodeSDK({
      serviceName: 'user-app',
      spanProcessors: [langfuse, userProcessor],
      instrumentations: [],
    });
    sdk.start();

    // setupTracing() sees the SDK and stays out of its way.
    const tracing = setupTracing({
      env: { LANGFUSE_PUBLIC_KEY: 'pk', LANGFUSE_SECRET_KEY: 'sk', LANGFUSE_BASE_URL: receiver.url },
      onWarning: (message) => warnings.push(message),
    });
    const app = new App({ name: 'echo-app', agents: [echo], tracing }).mount(EchoOrchestrator);

    // Like an HTTP server instrumentation: a span Langfuse's filter drops, around Switchboard work.
    const helper = observe(async (text: string) => text.trim(), { name: 'normalise' });
    await trace
      .getTracer('@opentelemetry/instrumentation-http')
      .startActiveSpan('POST /chat', { kind: SpanKind.SERVER }, async (httpSpan) => {
        httpSpanId = httpSpan.spanContext().spanId;
        const message = await helper('  hi  ');
        traceId = (await app.chat({ message, sessionId: 'ses_sdk' })).traceId;
        httpSpan.end();
      });
    await userProcessor.forceFlush();
    everythingNames = everything.getFinishedSpans().map((span) => span.name);
    await sdk.shutdown();
    spans = receiver.spans();
  });

  afterAll(async () => {
    await receiver?.close();
    vi.unstubAllEnvs();
  });

  it('lets setupTracing() warn instead of replacing the registered provider', () => {
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('switchboardSpanProcessor()');
  });

  it("sends Switchboard's spans to Langfuse and keeps other scopes out", () => {
    expect(receiver.requests.every((request) => request.path === '/api/public/otel/v1/traces')).toBe(true);
    expect(spans.map((span) => span.name).sort()).toEqual([
      'agent echo',
      'echo-app',
      'normalise',
      'route 0',
      'route 1',
    ]);
    expect(spans.every((span) => span.resource['service.name'] === 'user-app')).toBe(true);
    const turn = spans.find((span) => span.name === 'echo-app');
    expect(turn?.traceId).toBe(traceId);
    expect(turn?.parentSpanId).toBeUndefined();
    // A trace of its own per turn, linked to the request span that carried it.
    expect(turn?.links.map((link) => link.spanId)).toEqual([httpSpanId]);
    // The user's own processor still sees everything, the HTTP span included.
    expect(everythingNames).toContain('POST /chat');
  });

  it('re-parents a kept span whose parent was dropped, so nothing points at a missing span', () => {
    const ids = new Set(spans.map((span) => span.spanId));
    for (const span of spans) {
      if (span.parentSpanId !== undefined) expect(ids, `parent of ${span.name}`).toContain(span.parentSpanId);
    }
    const normalise = spans.find((span) => span.name === 'normalise');
    expect(normalise?.parentSpanId).toBeUndefined();
    expect(normalise?.attributes[ORIGINAL_PARENT_ATTRIBUTE]).toBe(httpSpanId);
  });
});
