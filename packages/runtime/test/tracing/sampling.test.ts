import { ConfigurationError } from '@switchboard/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createOtlpReceiver, type OtlpReceiver } from '../../src/testing/otlp-receiver.js';
import { setupTracing, type TracingHandle } from '../../src/tracing/setup-tracing.js';
import { createApp, echoAgent } from '../support/app-fixtures.js';

let receiver: OtlpReceiver | undefined;
let tracing: TracingHandle | undefined;
afterEach(async () => {
  vi.unstubAllEnvs();
  await tracing?.shutdown();
  await receiver?.close();
  tracing = undefined;
  receiver = undefined;
});

const langfuse = (url: string) => ({ publicKey: 'pk-lf-sample', secretKey: 'sk-lf-sample', baseUrl: url });

/** Runs `turns` one-agent turns through a traced app and returns their trace ids and the exported spans. */
async function tracedTurns(turns: number, options: { sampleRate?: number; env?: Record<string, string> }) {
  receiver = await createOtlpReceiver();
  tracing = setupTracing({ env: options.env ?? {}, langfuse: langfuse(receiver.url), ...options });
  const { app } = createApp({ agents: [echoAgent()], tracing });
  const traceIds: (string | undefined)[] = [];
  for (let index = 0; index < turns; index++) {
    const turn = await app.chat({ sessionId: `ses-sample-${index % 7}`, message: `echo: turn ${index}` });
    expect(turn.status).toBe('completed');
    traceIds.push(turn.traceId);
  }
  await tracing.forceFlush();
  const sessions = Array.from({ length: Math.min(turns, 7) }, (_, index) => `ses-sample-${index}`);
  const records = (await Promise.all(sessions.map((id) => app.sessions.listTurns(id)))).flat();
  await app.close();
  return { traceIds, records, spans: receiver.spans() };
}

describe('sampling turns', () => {
  it('keeps about the share of turns asked for, each kept turn whole, and says which through its trace id', async () => {
    const turns = 120;
    const { traceIds, spans } = await tracedTurns(turns, { sampleRate: 0.5 });
    const exported = new Map<string, string[]>();
    for (const span of spans) exported.set(span.traceId, [...(exported.get(span.traceId) ?? []), span.name]);
    // Binomial(120, 0.5): 60 ± 5.5; the bounds are more than five deviations away.
    expect(exported.size).toBeGreaterThan(30);
    expect(exported.size).toBeLessThan(90);
    // A kept turn has every span: the turn, both decisions and the agent call.
    for (const names of exported.values())
      expect(names.sort()).toEqual(['agent echo', 'route 0', 'route 1', 'scripted']);
    // The turn reports a trace id exactly when its trace was kept, so a link to Langfuse never leads nowhere.
    const reported = traceIds.filter((id): id is string => id !== undefined);
    expect(new Set(reported)).toEqual(new Set(exported.keys()));
  });

  it("reads Langfuse's LANGFUSE_SAMPLE_RATE: at 0 no turn is exported, and every turn still answers", async () => {
    const { traceIds, records, spans } = await tracedTurns(10, { env: { LANGFUSE_SAMPLE_RATE: '0' } });
    expect(spans).toEqual([]);
    expect(traceIds.every((id) => id === undefined)).toBe(true);
    // Nor does the stored record of a turn name a trace that was never exported.
    expect(records).toHaveLength(10);
    expect(records.filter((record) => record.traceId !== undefined || record.traces !== undefined)).toEqual(
      [],
    );
  });

  it('lets the option win over the variable', async () => {
    const { spans } = await tracedTurns(3, { sampleRate: 1, env: { LANGFUSE_SAMPLE_RATE: '0' } });
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(3);
  });

  it("leaves OpenTelemetry's own OTEL_TRACES_SAMPLER in charge when no rate is set", async () => {
    vi.stubEnv('OTEL_TRACES_SAMPLER', 'always_off');
    const { spans } = await tracedTurns(3, {});
    expect(spans).toEqual([]);
  });

  it('reads a blank LANGFUSE_SAMPLE_RATE as unset, not as 0', async () => {
    const { spans } = await tracedTurns(2, { env: { LANGFUSE_SAMPLE_RATE: ' ' } });
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(2);
  });

  it('refuses a rate outside 0 to 1 at start-up, naming it', () => {
    for (const env of [{ LANGFUSE_SAMPLE_RATE: '1.5' }, { LANGFUSE_SAMPLE_RATE: 'half' }]) {
      const start = () => setupTracing({ env, langfuse: langfuse('http://127.0.0.1:9') });
      expect(start).toThrow(ConfigurationError);
      expect(start).toThrow(`'${env.LANGFUSE_SAMPLE_RATE}'`);
    }
    expect(() =>
      setupTracing({ env: {}, sampleRate: -0.1, langfuse: langfuse('http://127.0.0.1:9') }),
    ).toThrow(/sample rate '-0\.1' is not valid/);
  });
});
