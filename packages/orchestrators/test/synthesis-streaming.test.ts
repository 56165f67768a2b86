import { setTimeout as sleep } from 'node:timers/promises';
import { App, defineAgent, type TurnEvent } from '@switchboard/runtime';
import { createScriptedModelServer, type ScriptEntry } from '@switchboard/runtime/testing';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { parseEventStream, postJson } from '../../runtime/test/support/app-fixtures.js';
import { SupervisorOrchestrator } from '../src/index.js';

const ANSWER = 'Fly on Friday at 9:40, stay at the Hotel Roma near Termini, and pack for sun: 24 °C.';

function subgoals(goals: Record<string, string>, answer = '') {
  return JSON.stringify({
    thought: 'split',
    subgoals: Object.entries(goals).map(([agent, task]) => ({ agent, task })),
    answer,
  });
}

/** The synthesis, written by the model in small pieces as a real one streams. */
function synthesis(answer: string) {
  const content = subgoals({}, answer);
  const chunks: string[] = [];
  for (let index = 0; index < content.length; index += 6) chunks.push(content.slice(index, index + 6));
  return { content, chunks };
}

const agents = ['flights', 'hotels', 'weather'].map((name) =>
  defineAgent({
    name,
    description: `Finds ${name}`,
    run: async (message) => {
      await sleep(5);
      return `${name}: ${message}`;
    },
  }),
);

describe('a supervisor’s synthesis streams as the model writes it', () => {
  let close: (() => Promise<unknown>) | undefined;
  afterEach(() => close?.());

  async function serve(script: ScriptEntry[]) {
    const server = await createScriptedModelServer({ script });
    const orchestrator = new SupervisorOrchestrator({
      agents: agents.map(({ name, description }) => ({ name, description })),
      model: 'supervisor-model',
      client: new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 }),
    });
    const app = new App({ name: 'streaming', agents, logLevel: 'silent' }).mount(orchestrator);
    close = async () => {
      await app.close();
      await server.close();
    };
    return { app, server };
  }

  it('over SSE: answer-delta events, in pieces, before the message that holds the whole answer', async () => {
    const { app, server } = await serve([
      { content: subgoals({ flights: 'Flights to Rome', hotels: 'A hotel', weather: 'Rome weather' }) },
      synthesis(ANSWER),
    ]);
    const response = await app.request('/v1/chat', {
      ...postJson({ message: 'A weekend in Rome, please.' }),
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    });
    const events = parseEventStream(await response.text()).map((event) => event.data as TurnEvent);
    const deltas = events.filter((event) => event.type === 'answer-delta');
    const message = events.find((event) => event.type === 'message');
    expect(deltas.length).toBeGreaterThan(5);
    expect(deltas.map((event) => (event.type === 'answer-delta' ? event.delta : '')).join('')).toBe(ANSWER);
    // The deltas come first, then the whole answer under the same message id.
    expect(events.indexOf(deltas.at(-1)!)).toBeLessThan(events.indexOf(message!));
    expect(message).toMatchObject({ content: ANSWER, messageId: deltas[0]?.messageId });
    expect(new Set(deltas.map((event) => event.messageId)).size).toBe(1);
    // The decomposition is not streamed: it is a fan-out, not an answer.
    const firstAgent = events.findIndex((event) => event.type === 'agent-start');
    expect(events.findIndex((event) => event.type === 'answer-delta')).toBeGreaterThan(firstAgent);
    expect(server.requests.map((request) => request.body.stream)).toEqual([true, true]);
  });

  it('over the OpenAI-compatible stream: the answer is the content, piece by piece, and the content is the reply', async () => {
    const { app } = await serve([
      { content: subgoals({ flights: 'Flights to Rome', weather: 'Rome weather' }) },
      synthesis(ANSWER),
    ]);
    const response = await app.request(
      '/v1/chat/completions',
      postJson({ model: 'supervisor', stream: true, messages: [{ role: 'user', content: 'Rome?' }] }),
    );
    const chunks = (await response.text())
      .split('\n\n')
      .map((block) => block.replace(/^data: /, '').trim())
      .filter((data) => data !== '' && data !== '[DONE]')
      .map((data) => JSON.parse(data));
    const pieces = chunks.map((chunk) => chunk.choices?.[0]?.delta?.content).filter((text) => text);
    expect(pieces.length).toBeGreaterThan(5);
    expect(pieces.join('')).toBe(ANSWER);
    const last = chunks.find((chunk) => chunk.choices?.[0]?.finish_reason);
    expect(last.switchboard).toMatchObject({ reply: ANSWER, contentIsReply: true });
  });

  it('drops what was streamed when the answer is invalid and asked again: the message holds the valid one', async () => {
    const { app } = await serve([
      { content: subgoals({ flights: 'Flights to Rome', weather: 'Rome weather' }) },
      // Its answer streams, then the JSON turns out broken: the synthesis is asked again.
      { chunks: ['{"thought":"t","subgoals":[],"answer":"First try."', ', "extra": }'] },
      synthesis(ANSWER),
    ]);
    const response = await app.request('/v1/chat', {
      ...postJson({ message: 'Rome?' }),
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    });
    const events = parseEventStream(await response.text()).map((event) => event.data as TurnEvent);
    const answerEvents = events.filter((event) => event.type === 'answer-delta');
    const reset = answerEvents.findIndex((event) => event.type === 'answer-delta' && event.reset === true);
    expect(reset).toBeGreaterThan(0);
    const before = answerEvents
      .slice(0, reset)
      .map((event) => (event.type === 'answer-delta' ? event.delta : ''));
    const after = answerEvents
      .slice(reset + 1)
      .map((event) => (event.type === 'answer-delta' ? event.delta : ''));
    expect(before.join('')).toBe('First try.');
    expect(after.join('')).toBe(ANSWER);
    expect(events.find((event) => event.type === 'message')).toMatchObject({ content: ANSWER });
  });
});
