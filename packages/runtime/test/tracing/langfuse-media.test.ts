import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import { App } from '../../src/app.js';
import { createOtlpReceiver, type OtlpReceiver } from '../../src/testing/otlp-receiver.js';
import { setupTracing } from '../../src/tracing/setup-tracing.js';
import { Relay } from '../support/relay-orchestrator.js';

const TRACES_PATH = '/api/public/otel/v1/traces';
// A 1×1 PNG, as an app would inline an image in a message.
const IMAGE =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const echo = defineAgent({ name: 'echo', description: 'Repeats the message', run: (message) => message });

/** Runs one traced turn whose message carries an inline image, and returns the turn span's exported input. */
async function exportedInput(receiver: OtlpReceiver, env: Record<string, string>): Promise<string> {
  receiver.reset();
  const tracing = setupTracing({
    env: { LANGFUSE_PUBLIC_KEY: 'pk-lf-media', LANGFUSE_SECRET_KEY: 'sk-lf-media', ...env },
    langfuse: { baseUrl: receiver.url },
  });
  const app = new App({ name: 'media', agents: [echo], tracing, logger: () => {} });
  app.mount(Relay);
  try {
    await app.chat({ message: `look: ${IMAGE}` });
    await tracing.forceFlush();
  } finally {
    await app.close();
  }
  const turn = receiver.spans().find((span) => span.name === 'media');
  expect(turn, 'the turn span').toBeDefined();
  return String(turn?.attributes['langfuse.observation.input']);
}

describe('Langfuse media handling', () => {
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await createOtlpReceiver();
  });
  afterAll(() => receiver.close());

  it('is off by default: an inline image is exported as the text it is, and nothing is uploaded', async () => {
    const input = await exportedInput(receiver, {});
    expect(input).toBe(JSON.stringify(`look: ${IMAGE}`));
    expect(receiver.requests.map((request) => request.path)).toEqual(
      receiver.requests.map(() => TRACES_PATH),
    );
  });

  it('is on with LANGFUSE_MEDIA_UPLOAD_ENABLED=true: the image becomes a Langfuse media reference', async () => {
    const input = await exportedInput(receiver, { LANGFUSE_MEDIA_UPLOAD_ENABLED: 'true' });
    expect(input).not.toContain('base64,');
    expect(input).toContain('@@@langfuseMedia:');
  });
});
