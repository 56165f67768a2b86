import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { createOtlpReceiver, type OtlpReceiver } from '../../src/testing/otlp-receiver.js';

const exportBody = {
  resourceSpans: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
      scopeSpans: [
        {
          scope: { name: 'switchboard' },
          spans: [
            {
              traceId: 'aa'.repeat(16),
              spanId: 'bb'.repeat(8),
              parentSpanId: '',
              name: 'turn',
              kind: 1,
              startTimeUnixNano: '1000000000',
              endTimeUnixNano: '1250000000',
              attributes: [
                { key: 'hop', value: { intValue: '2' } },
                { key: 'ratio', value: { doubleValue: 0.5 } },
                { key: 'ok', value: { boolValue: true } },
                {
                  key: 'agents',
                  value: { arrayValue: { values: [{ stringValue: 'a' }, { stringValue: 'b' }] } },
                },
                {
                  key: 'nested',
                  value: { kvlistValue: { values: [{ key: 'k', value: { stringValue: 'v' } }] } },
                },
              ],
              status: { code: 2, message: 'failed' },
              events: [
                {
                  name: 'exception',
                  attributes: [{ key: 'exception.message', value: { stringValue: 'boom' } }],
                },
              ],
            },
          ],
        },
      ],
    },
  ],
};

describe('createOtlpReceiver', () => {
  let receiver: OtlpReceiver | undefined;
  afterEach(() => receiver?.close());

  const post = (path: string, body: Buffer | string, headers: Record<string, string>) =>
    fetch(`${receiver?.url}${path}`, { method: 'POST', body, headers });

  it('records path, headers and a gzip JSON export flattened to plain values', async () => {
    receiver = await createOtlpReceiver();
    const response = await post('/v1/traces', gzipSync(JSON.stringify(exportBody)), {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
      authorization: 'Basic abc',
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({});
    const [request] = receiver.requests;
    expect(request).toMatchObject({
      method: 'POST',
      path: '/v1/traces',
      headers: { authorization: 'Basic abc' },
    });
    expect(receiver.spans()).toEqual([
      {
        traceId: 'aa'.repeat(16),
        spanId: 'bb'.repeat(8),
        name: 'turn',
        kind: 1,
        startTimeUnixNano: '1000000000',
        endTimeUnixNano: '1250000000',
        durationMs: 250,
        attributes: { hop: 2, ratio: 0.5, ok: true, agents: ['a', 'b'], nested: { k: 'v' } },
        status: { code: 2, message: 'failed' },
        events: [{ name: 'exception', attributes: { 'exception.message': 'boom' } }],
        links: [],
        scope: 'switchboard',
        resource: { 'service.name': 'svc' },
      },
    ]);
  });

  it('answers a malformed body with 400 and records why', async () => {
    receiver = await createOtlpReceiver();
    const response = await post('/v1/traces', '{"resourceSpans": [{"scopeSpans": 7}]}', {
      'content-type': 'application/json',
    });
    expect(response.status).toBe(400);
    expect(receiver.requests[0]?.error).toBeDefined();
    expect(receiver.spans()).toEqual([]);
  });

  it('waits for spans, and as a bench sink only counts requests', async () => {
    receiver = await createOtlpReceiver();
    const waiting = receiver.waitForSpans((spans) => spans.length === 1, { timeoutMs: 2_000 });
    await post('/v1/traces', JSON.stringify(exportBody), { 'content-type': 'application/json' });
    await expect(waiting).resolves.toHaveLength(1);
    await expect(receiver.waitForSpans((spans) => spans.length === 2, { timeoutMs: 50 })).rejects.toThrow(
      /1 spans/,
    );
    await receiver.close();

    receiver = await createOtlpReceiver({ record: false });
    const response = await post('/v1/traces', JSON.stringify(exportBody), {
      'content-type': 'application/json',
    });
    expect(response.status).toBe(200);
    expect(receiver.requestCount).toBe(1);
    expect(receiver.requests).toEqual([]);
  });
});
