import { randomUUID } from 'node:crypto';
import type { MessageItem } from '@switchboard/core';
import type { App, TurnRecord, TurnResult } from '@switchboard/runtime';
import { createScriptedModelServer, type ScriptedModelServer } from '@switchboard/runtime/testing';
import { describe, expect, it } from 'vitest';
import { parseEventStream } from '../../../packages/runtime/test/support/app-fixtures.js';
import { buildApp } from '../src/app.js';
import { travelDeskModel } from '../src/offline-model.js';
import { CITIES, SimulatedTravelServices, type TravelService } from '../src/travel-services.js';

const REQUEST = 'Plan a weekend in Rome: flights, a hotel and the weather';
const rome = CITIES.find((city) => city.name === 'Rome')!;
const FLIGHTS = `Flights to Rome: ${rome.flights.join('; ')}.`;
const HOTELS = `Hotels in Rome: ${rome.hotels.join('; ')}.`;
const WEATHER = `Weekend weather in Rome: ${rome.forecast}.`;

interface Desk {
  app: App;
  model: ScriptedModelServer;
  services: SimulatedTravelServices;
}

/**
 * Runs `test` against the travel desk on a scripted supervising model that
 * must be asked exactly `modelCalls` times (default 2: the decomposition and
 * the synthesis), with booking services answering after 30 ms and `down` failing.
 */
async function withDesk(
  { down = [], modelCalls = 2 }: { down?: TravelService[]; modelCalls?: number },
  test: (desk: Desk) => Promise<void>,
): Promise<void> {
  const model = await createScriptedModelServer({
    script: Array.from({ length: modelCalls }, () => travelDeskModel),
  });
  const services = new SimulatedTravelServices({ latencyMs: 30, down });
  const { app, orchestrator } = buildApp({
    model: 'gpt-4o-mini',
    apiKey: 'test-key',
    baseURL: model.url,
    maxRetries: 0,
    services,
    logLevel: 'silent',
  });
  app.mount(orchestrator);
  try {
    await test({ app, model, services });
    model.assertDone();
  } finally {
    await app.close();
    await model.close();
  }
}

const chat = (app: App, message: string, sessionId = `ses-${randomUUID()}`, accept = 'application/json') =>
  app.request('/v1/chat', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept },
    body: JSON.stringify({ sessionId, message }),
  });

/** The text of the last message the model received in the `index`-th request. */
const lastPrompt = (model: ScriptedModelServer, index: number) =>
  String(model.requests[index]?.body.messages.at(-1)?.content ?? '');

describe('supervisor example over HTTP (scripted model)', () => {
  it('fans a trip request out to the three agents at once and answers with the synthesis', async () => {
    await withDesk({}, async ({ app, model, services }) => {
      const response = await chat(app, REQUEST);
      expect(response.status).toBe(200);
      const body = (await response.json()) as TurnResult;
      expect(body.status).toBe('completed');
      expect(body.reply).toBe([FLIGHTS, HOTELS, WEATHER].join('\n'));

      // Each agent asked its service once, and every request started before any ended: they overlapped.
      expect(services.calls.map((call) => call.service).sort()).toEqual(['flights', 'hotels', 'weather']);
      const latestStart = Math.max(...services.calls.map((call) => call.startedAt));
      const earliestEnd = Math.min(...services.calls.map((call) => call.endedAt!));
      expect(latestStart).toBeLessThan(earliestEnd);

      // The synthesis read every branch's reply: the answer comes from them, not from the model's memory.
      for (const reply of [FLIGHTS, HOTELS, WEATHER]) expect(lastPrompt(model, 1)).toContain(reply);
    });
  });

  it('names what is missing when an agent fails, and the model was told it is MISSING', async () => {
    await withDesk({ down: ['hotels'] }, async ({ app, model }) => {
      const body = (await (await chat(app, REQUEST)).json()) as TurnResult;
      expect(body.status).toBe('completed');
      expect(body.reply).toBe(
        [
          FLIGHTS,
          WEATHER,
          'Missing: I could not get the hotels part right now; please ask again later.',
        ].join('\n'),
      );
      expect(lastPrompt(model, 1)).toContain('[MISSING: agent "hotels" gave no result');
      // The service's error stays out of the prompt and of the answer.
      expect(lastPrompt(model, 1)).not.toContain('503');
      expect(body.reply).not.toContain('503');
      expect(body.steps.at(-1)?.annotations).toMatchObject({ missing: ['hotels'], synthesis: 'model' });
    });
  });

  it('stores the fan-out step with its correlation id and expected branches (GET /v1/sessions/:id)', async () => {
    await withDesk({}, async ({ app }) => {
      const sessionId = `ses-${randomUUID()}`;
      expect((await chat(app, REQUEST, sessionId)).status).toBe(200);

      const response = await app.request(`/v1/sessions/${sessionId}`);
      expect(response.status).toBe(200);
      const { messages, turns } = (await response.json()) as { messages: MessageItem[]; turns: TurnRecord[] };
      const [fanOut, answer] = turns[0]!.steps;
      expect(fanOut).toMatchObject({
        kind: 'fan-out',
        annotations: { expectedBranches: 3, round: 1 },
      });
      const correlationId = String(fanOut?.annotations?.correlationId);
      expect(correlationId).toMatch(/\S/);
      expect(
        fanOut?.calls.map((call) => [call.agent, call.toolCallId.startsWith(`${correlationId}.`)]),
      ).toEqual([
        ['flights', true],
        ['hotels', true],
        ['weather', true],
      ]);
      expect(answer).toMatchObject({ kind: 'answer', annotations: { correlationId, missing: [] } });
      // The three replies are stored with the branch ids, between the question and the answer.
      expect(messages.map((message) => message.role)).toEqual(['user', 'tool', 'tool', 'tool', 'assistant']);
      for (const message of messages.filter((item) => item.role === 'tool')) {
        expect(message.role === 'tool' && message.toolCallId.startsWith(`${correlationId}.`)).toBe(true);
      }
    });
  });

  it('streams every branch with a tool call id that starts with the correlation id', async () => {
    await withDesk({}, async ({ app }) => {
      const response = await chat(app, REQUEST, undefined, 'text/event-stream');
      expect(response.headers.get('content-type')).toContain('text/event-stream');
      const events = parseEventStream(await response.text()).map((event) => event.data);

      const route = events.find((event) => event.type === 'route');
      const correlationId =
        route?.type === 'route' ? String(route.step.annotations?.correlationId) : 'no fan-out';
      expect(route).toMatchObject({ step: { kind: 'fan-out', annotations: { expectedBranches: 3 } } });
      const branches = events.flatMap((event) =>
        event.type === 'agent-start' || event.type === 'agent-end'
          ? [{ type: event.type, agent: event.agent, toolCallId: event.toolCallId }]
          : [],
      );
      expect(branches.filter((event) => event.type === 'agent-start').map((event) => event.agent)).toEqual([
        'flights',
        'hotels',
        'weather',
      ]);
      expect(branches.filter((event) => event.type === 'agent-end')).toHaveLength(3);
      for (const event of branches) expect(event.toolCallId.startsWith(`${correlationId}.`)).toBe(true);
      // All three branches started before the first one ended.
      expect(branches.slice(0, 3).every((event) => event.type === 'agent-start')).toBe(true);
      expect(events.at(-1)).toMatchObject({ type: 'turn-end', status: 'completed' });
      expect(events.find((event) => event.type === 'message')).toMatchObject({
        content: [FLIGHTS, HOTELS, WEATHER].join('\n'),
      });
    });
  });

  it('answers without agents when the request names no city it knows', async () => {
    await withDesk({ modelCalls: 1 }, async ({ app, services }) => {
      const body = (await (await chat(app, 'Plan me something nice')).json()) as TurnResult;
      expect(body.reply).toBe('Which city shall I plan your weekend in? I know Rome, Lisbon, Oslo.');
      expect(body.steps.map((step) => step.kind)).toEqual(['answer']);
      expect(services.calls).toEqual([]);
    });
  });
});
