import { request } from 'node:http';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import { llmAgent } from '../../src/agents/llm-agent.js';
import type { ServerHandle } from '../../src/app.js';
import type { TurnEvent } from '../../src/engine/events.js';
import {
  createScriptedModelServer,
  type ScriptedModelServer,
} from '../../src/testing/scripted-model-server.js';
import { buildApp, parseEventStream } from '../support/app-fixtures.js';

const WORDS = Array.from({ length: 50 }, (_, index) => `word${index} `);

/** Writes its 50 words at once (one tick), as a model's deltas read together reach an agent. */
const burst = defineAgent({
  name: 'burst',
  description: 'Answers in one burst of chunks',
  async *run() {
    yield* WORDS;
  },
});

/** POSTs JSON to a running server and collects the response body in the pieces the client received. */
function postForPieces(url: string, body: unknown): Promise<{ status: number; pieces: string[] }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const payload = JSON.stringify(body);
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        const pieces: string[] = [];
        res.setEncoding('utf8');
        res.on('data', (piece: string) => pieces.push(piece));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, pieces }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('a burst of deltas relayed as Server-Sent Events', () => {
  let server: ServerHandle | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('/v1/chat sends the deltas of one tick in one piece, each event keeping its own id', async () => {
    const { app, orchestrator } = buildApp({ agents: [burst] });
    server = await app.start(orchestrator, { port: 0 });
    const { status, pieces } = await postForPieces(`${server.url}/v1/chat`, {
      message: 'burst: go',
      sessionId: 'burst',
      stream: true,
    });
    expect(status).toBe(200);
    const events = parseEventStream(pieces.join(''));
    const deltas = events.filter((event) => event.event === 'agent-delta');
    expect(deltas.map(({ data }) => (data as Extract<TurnEvent, { type: 'agent-delta' }>).delta)).toEqual(
      WORDS,
    );
    // Every event is still its own SSE event with its own id (a rejoin after any of them works as before).
    const ids = events.map((event) => event.id);
    expect(ids.every((id) => id !== undefined)).toBe(true);
    expect(new Set(ids).size).toBe(events.length);
    expect(events.map((event) => event.data.eventId)).toEqual(ids);
    // The 50 deltas came in one tick: the client cannot tell them apart, so they reach it together.
    const withDeltas = pieces.filter((piece) => piece.includes('event: agent-delta'));
    expect(withDeltas).toHaveLength(1);
    expect(pieces.length).toBeLessThan(WORDS.length / 5);
  });

  it('/v1/chat/completions sends the content chunks of one tick in one piece, then [DONE]', async () => {
    const { app, orchestrator } = buildApp({ agents: [burst] });
    server = await app.start(orchestrator, { port: 0 });
    const { status, pieces } = await postForPieces(`${server.url}/v1/chat/completions`, {
      model: 'scripted',
      stream: true,
      messages: [{ role: 'user', content: 'burst: go' }],
    });
    expect(status).toBe(200);
    const frames = pieces
      .join('')
      .split('\n\n')
      .filter((frame) => frame.startsWith('data: '))
      .map((frame) => frame.slice('data: '.length));
    expect(frames.at(-1)).toBe('[DONE]');
    const content = frames
      .slice(0, -1)
      .map((frame) => (JSON.parse(frame) as { choices: { delta?: { content?: string } }[] }).choices[0])
      .map((choice) => choice?.delta?.content ?? '')
      .join('');
    expect(content).toBe(WORDS.join(''));
    expect(pieces.filter((piece) => piece.includes('"content":"word')).length).toBe(1);
    expect(pieces.length).toBeLessThan(WORDS.length / 5);
  });
});

describe("an llmAgent's streamed answer", () => {
  let model: ScriptedModelServer | undefined;
  afterEach(async () => {
    await model?.close();
    model = undefined;
  });

  it('hands on its first delta before the rest of the read it came in', async () => {
    model = await createScriptedModelServer({ script: [{ chunks: WORDS, content: WORDS.join('') }] });
    const writer = llmAgent({
      name: 'writer',
      description: 'Writes',
      model: 'test-model',
      instructions: 'Write.',
      client: new OpenAI({ apiKey: 'test', baseURL: model.url, maxRetries: 0 }),
    });
    const { app, orchestrator } = buildApp({ agents: [writer] });
    const mounted = app.mount(orchestrator);
    // How many deltas the turn had handed on when the event loop next turned after the first one: the relay
    // writes in that turn, so a first delta held back until the whole read was parsed would reach nobody first.
    let deltas = 0;
    let seenByThen: number | undefined;
    const result = await mounted.chat({
      message: 'writer: go',
      onEvent: (event) => {
        if (event.type !== 'agent-delta') return;
        deltas++;
        if (deltas === 1) setImmediate(() => (seenByThen = deltas));
      },
    });
    expect(result.reply).toBe(WORDS.join(''));
    expect(deltas).toBe(WORDS.length);
    expect(seenByThen).toBe(1);
    model.assertDone();
  });
});
