import { afterEach, describe, expect, it } from 'vitest';
import { createOtlpReceiver, type OtlpReceiver } from '../../src/testing/otlp-receiver.js';
import { setupTracing, type TracingHandle } from '../../src/tracing/setup-tracing.js';
import { createApp, echoAgent } from '../support/app-fixtures.js';

let receiver: OtlpReceiver | undefined;
let tracing: TracingHandle | undefined;
afterEach(async () => {
  await tracing?.shutdown();
  await receiver?.close();
  tracing = undefined;
  receiver = undefined;
});

describe('export to Langfuse as protobuf', () => {
  it('posts the same spans to the same Langfuse endpoint, with its Basic auth, encoded as protobuf', async () => {
    receiver = await createOtlpReceiver();
    tracing = setupTracing({
      env: { OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' },
      langfuse: { publicKey: 'pk-lf-proto', secretKey: 'sk-lf-proto', baseUrl: receiver.url },
    });
    const { app } = createApp({ name: 'proto-desk', agents: [echoAgent()], tracing });
    const turn = await app.chat({ sessionId: 'ses-proto-1', message: 'echo: protobuf please' });
    expect(turn.status).toBe('completed');
    await tracing.forceFlush();

    expect(receiver.requests.length).toBeGreaterThan(0);
    const basic = `Basic ${Buffer.from('pk-lf-proto:sk-lf-proto').toString('base64')}`;
    for (const request of receiver.requests) {
      expect(request.path).toBe('/api/public/otel/v1/traces');
      expect(request.headers.authorization).toBe(basic);
      expect(request.headers['content-type']).toBe('application/x-protobuf');
    }
    // Protobuf carries strings as they are: every span of the turn, its session and its trace name are there.
    const body = Buffer.concat(receiver.requests.map((request) => request.raw ?? Buffer.alloc(0))).toString(
      'latin1',
    );
    for (const text of [
      'route 0',
      'route 1',
      'agent echo',
      'ses-proto-1',
      'proto-desk app.chat()',
      'langfuse.observation.input',
    ])
      expect(body).toContain(text);
    await app.close();
  });

  it("is the default, and sends the very headers Langfuse's own JSON exporter sends", async () => {
    const headersOf = async (env: Record<string, string>) => {
      receiver = await createOtlpReceiver();
      tracing = setupTracing({
        env,
        langfuse: { publicKey: 'pk-lf-same', secretKey: 'sk-lf-same', baseUrl: receiver.url },
      });
      const { app } = createApp({ agents: [echoAgent()], tracing });
      await app.chat({ message: 'echo: which encoding?' });
      await tracing.forceFlush();
      const [request] = receiver.requests;
      await app.close();
      await tracing.shutdown();
      await receiver.close();
      tracing = undefined;
      receiver = undefined;
      return { path: request?.path, headers: { ...request?.headers } };
    };
    const byDefault = await headersOf({});
    const json = await headersOf({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    expect(byDefault.headers['content-type']).toBe('application/x-protobuf');
    expect(json.headers['content-type']).toBe('application/json');
    expect(byDefault.path).toBe(json.path);
    const langfuseHeaders = (headers: Record<string, string>) =>
      Object.fromEntries(
        Object.entries(headers).filter(
          ([name]) => name === 'authorization' || name.startsWith('x-langfuse-'),
        ),
      );
    expect(langfuseHeaders(json.headers)['x-langfuse-sdk-version']).toBeDefined();
    expect(langfuseHeaders(byDefault.headers)).toEqual(langfuseHeaders(json.headers));
  });

  it("still masks through Langfuse's own path when a mask is configured", async () => {
    receiver = await createOtlpReceiver();
    tracing = setupTracing({
      env: {},
      langfuse: {
        publicKey: 'pk',
        secretKey: 'sk',
        baseUrl: receiver.url,
        mask: ({ data }) => (typeof data === 'string' ? data.replace(/secret-\w+/g, '[masked]') : data),
      },
    });
    const { app } = createApp({ agents: [echoAgent()], tracing });
    await app.chat({ message: 'echo: secret-token-42' });
    await tracing.forceFlush();
    const outputs = receiver
      .spans()
      .map((span) => String(span.attributes['langfuse.observation.output'] ?? ''));
    expect(outputs.join(' ')).toContain('[masked]');
    expect(JSON.stringify(receiver.spans())).not.toContain('secret-token-42');
    await app.close();
  });

  it('refuses an unknown protocol at start-up', () => {
    expect(() =>
      setupTracing({
        env: { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
        langfuse: { publicKey: 'pk', secretKey: 'sk', baseUrl: 'http://127.0.0.1:9' },
      }),
    ).toThrow(/Unsupported OTLP protocol 'grpc'/);
  });
});
