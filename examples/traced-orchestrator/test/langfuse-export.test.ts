import { setupTracing } from '@switchboard/runtime/otel';
import type { OtlpSpan } from '@switchboard/runtime/testing';
import { createOtlpReceiver, type OtlpReceiver } from '@switchboard/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';

/** Langfuse's batch interval for this test (`flushInterval`, seconds): far longer than the test waits. */
const FLUSH_INTERVAL_SECONDS = 60;

/** The wiring of src/main.ts — `setupTracing()` from the LANGFUSE_* variables passed as `tracing` — against a loopback receiver. */
describe('traced orchestrator example exporting to Langfuse', () => {
  let receiver: OtlpReceiver;
  let spans: OtlpSpan[];
  let traceId: string;
  let requestsBeforeClose: number;

  beforeAll(async () => {
    receiver = await createOtlpReceiver();
    const tracing = setupTracing({
      env: {
        LANGFUSE_PUBLIC_KEY: 'pk-lf-example',
        LANGFUSE_SECRET_KEY: 'sk-lf-example',
        LANGFUSE_BASE_URL: receiver.url,
      },
      // Langfuse's own batch timer (default every 5 s) would deliver the spans too; a minute
      // keeps it out of this test, so only close()'s flush can deliver them.
      langfuse: { flushInterval: FLUSH_INTERVAL_SECONDS },
    });
    expect(tracing.destinations).toEqual(['langfuse']);
    const { app, orchestrator } = buildApp({ tracing, logLevel: 'silent' });
    const server = await app.start(orchestrator, { port: 0 });
    const response = await fetch(`${server.url}/v1/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        message: 'I cannot login, wrong password error',
        userId: 'linus',
        sessionId: 'ses-export',
      }),
    });
    expect(response.status).toBe(200);
    traceId = ((await response.json()) as { traceId: string }).traceId;
    // The turn is over and its spans are finished, but the batch processor still holds them.
    await new Promise((resolve) => setTimeout(resolve, 200));
    requestsBeforeClose = receiver.requests.length;
    // close() flushes them: they arrive promptly, far sooner than the batch timer would send them.
    await server.close();
    spans = await receiver.waitForSpans((received) => received.some((span) => span.name === 'support'), {
      timeoutMs: 1_000,
    });
  });
  afterAll(() => receiver.close());

  it('holds the spans until close(), which flushes them', () => {
    expect(requestsBeforeClose).toBe(0);
    expect(spans.map((span) => span.name)).toContain('support');
  });

  it('sends one trace with the observe spans, authenticated with the keys, to Langfuse’s OTLP path', () => {
    const request = receiver.requests[0];
    expect(request?.path).toBe('/api/public/otel/v1/traces');
    expect(request?.headers.authorization).toBe(
      `Basic ${Buffer.from('pk-lf-example:sk-lf-example').toString('base64')}`,
    );

    expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set([traceId]));
    const names = spans.map((span) => span.name).sort();
    expect(names).toEqual(
      [
        'agent tech-support',
        'check-entitlement',
        'route 0',
        'route 1',
        'score-agents',
        'select-agent',
        'support',
      ].sort(),
    );
    const ids = new Set(spans.map((span) => span.spanId));
    for (const span of spans)
      if (span.parentSpanId) expect(ids, `parent of ${span.name}`).toContain(span.parentSpanId);
    expect(spans.every((span) => span.attributes['session.id'] === 'ses-export')).toBe(true);

    const byName = (name: string) => spans.find((span) => span.name === name);
    expect(byName('select-agent')?.parentSpanId).toBe(byName('route 0')?.spanId);
    expect(byName('select-agent')?.attributes['langfuse.observation.output']).toBe('"tech-support"');
    expect(byName('check-entitlement')?.attributes).not.toHaveProperty('langfuse.observation.input');
    expect(byName('check-entitlement')?.attributes['langfuse.observation.output']).toBe('"standard"');
  });
});
