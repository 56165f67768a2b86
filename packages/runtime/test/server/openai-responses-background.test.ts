import OpenAI, { BadRequestError, NotFoundError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import { App, type ServerHandle } from '../../src/app.js';
import { InMemoryTurnQueue } from '../../src/background/in-memory-turn-queue.js';
import { apiKeys } from '../../src/server/auth.js';
import { relay, ScriptedOrchestrator, sleep } from '../support/app-fixtures.js';

const MODEL = 'desk-router';
const ACME = 'key-acme-0123456789';
const GLOBEX = 'key-globex-0123456789';

describe('background responses (the Responses API with background: true)', () => {
  let server: ServerHandle;
  let client: OpenAI;
  const gates: Array<() => void> = [];

  beforeAll(async () => {
    const gated = defineAgent({
      name: 'echo',
      description: 'Answers once let through',
      async run(message) {
        await new Promise<void>((resolve) => gates.push(resolve));
        return `done: ${message}`;
      },
    });
    const app = new App({
      name: 'desk',
      agents: [gated],
      logger: () => {},
      auth: apiKeys({ keys: { [ACME]: { tenantId: 'acme' }, [GLOBEX]: { tenantId: 'globex' } } }),
      background: { queue: new InMemoryTurnQueue({ concurrency: 1 }) },
    });
    server = await app.start(new ScriptedOrchestrator([gated], relay(), MODEL), { port: 0 });
    client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: ACME, maxRetries: 0 });
  });
  afterAll(() => server.close());

  it('answers queued at once, then in_progress, then completed with the answer, with the official client', async () => {
    const first = await client.responses.create({ model: MODEL, input: 'one', background: true });
    const second = await client.responses.create({ model: MODEL, input: 'two', background: true });
    expect(first.status).toBe('queued');
    expect(first.background).toBe(true);
    expect(first.output).toEqual([]);
    for (let attempt = 0; attempt < 300 && gates.length === 0; attempt += 1) await sleep(10);
    expect((await client.responses.retrieve(first.id)).status).toBe('in_progress');
    expect((await client.responses.retrieve(second.id)).status).toBe('queued');
    gates.shift()?.();
    let done = await client.responses.retrieve(first.id);
    for (let attempt = 0; attempt < 300 && done.status !== 'completed'; attempt += 1) {
      await sleep(10);
      done = await client.responses.retrieve(first.id);
    }
    expect(done.output_text).toBe('done: one');
    // Another tenant cannot read it.
    const other = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: GLOBEX, maxRetries: 0 });
    await expect(other.responses.retrieve(second.id)).rejects.toBeInstanceOf(NotFoundError);
    for (let attempt = 0; attempt < 300 && gates.length === 0; attempt += 1) await sleep(10);
    gates.shift()?.();
  });

  it('refuses a streamed or unstored background response with 400', async () => {
    await expect(
      client.responses.create({ model: MODEL, input: 'x', background: true, store: false }),
    ).rejects.toBeInstanceOf(BadRequestError);
    const streamed = await fetch(`${server.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ACME}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, input: 'x', background: true, stream: true }),
    });
    expect(streamed.status).toBe(400);
    expect(((await streamed.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');
  });
});
