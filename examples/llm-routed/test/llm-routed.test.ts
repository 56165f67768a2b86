import { afterEach, describe, expect, it } from 'vitest';
import { FALLBACK_MESSAGE } from '../src/app.js';
import { MODEL, parseEvents, routeTo, startWithScript } from './support.js';

interface ChatReply {
  sessionId: string;
  reply: string;
  status: string;
  steps: Array<{ kind: string; calls: Array<{ agent: string; reason?: string }> }>;
}

const WEATHER_QUESTION = 'What is the weather in Paris right now?';
const WEATHER_ANSWER = 'It is 18 °C with light rain in Paris.';

/** The four model calls of a weather turn: route, tool call, answer, route to the user. */
const weatherScript = (chunks?: string[]) => [
  routeTo('weather', WEATHER_QUESTION, 'a weather question'),
  { toolCalls: [{ id: 'call_paris', name: 'get_weather', arguments: { city: 'Paris' } }] },
  { content: WEATHER_ANSWER, ...(chunks ? { chunks } : {}), usage: { inputTokens: 40, outputTokens: 12 } },
  routeTo('route_to_user', WEATHER_ANSWER, 'the weather agent answered'),
];

describe('llm-routed example (real openai client, scripted model)', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  const post = (url: string, body: object, headers: Record<string, string> = {}) =>
    fetch(`${url}/v1/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  it('routes a weather question to the llm agent, which calls its tool, then answers the user', async () => {
    const running = await startWithScript(weatherScript());
    close = running.close;
    const response = await post(running.server.url, { message: "What's the weather like in Paris?" });
    expect(response.status).toBe(200);
    const body = (await response.json()) as ChatReply;

    expect(body.reply).toBe(WEATHER_ANSWER);
    expect(body.status).toBe('completed');
    expect(body.steps).toMatchObject([
      { kind: 'call', calls: [{ agent: 'weather', reason: 'a weather question' }] },
      { kind: 'answer', calls: [{ agent: 'route_to_user' }] },
    ]);

    running.model.assertDone();
    const [route, toolTurn, answerTurn, finalRoute] = running.model.requests.map((request) => request.body);
    // The router: a strict JSON schema whose agent enum is the app's agents plus route_to_user.
    expect(route?.model).toBe(MODEL);
    expect(route?.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: {
        strict: true,
        schema: { properties: { agent: { enum: ['weather', 'converter', 'route_to_user'] } } },
      },
    });
    expect(route?.messages.at(-1)).toEqual({ role: 'user', content: "What's the weather like in Paris?" });

    // The agent: the router's task, and the tool definition derived from the zod schema.
    expect(toolTurn?.stream).toBe(true);
    expect(toolTurn?.messages.at(-1)).toEqual({ role: 'user', content: WEATHER_QUESTION });
    expect(toolTurn?.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Current weather of a city',
          parameters: {
            type: 'object',
            properties: {
              city: { type: 'string', minLength: 1, description: 'City name, e.g. Paris' },
              units: {
                type: 'string',
                enum: ['celsius', 'fahrenheit'],
                default: 'celsius',
                description: 'Temperature units',
              },
            },
            required: ['city'],
          },
        },
      },
    ]);

    // The tool result fed back to the model, answering its call.
    expect(answerTurn?.messages.at(-2)).toMatchObject({
      role: 'assistant',
      tool_calls: [{ id: 'call_paris' }],
    });
    expect(answerTurn?.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_paris',
      content: JSON.stringify({ city: 'Paris', temperature: 18, units: 'celsius', conditions: 'light rain' }),
    });

    // The router sees the agent's reply before answering the user.
    expect(finalRoute?.messages.at(-1)).toEqual({
      role: 'user',
      content: `[Agent "weather" replied]\n${WEATHER_ANSWER}`,
    });
  });

  it('feeds a tool error back to the model so it can answer anyway', async () => {
    const running = await startWithScript([
      routeTo('weather', 'Weather in Atlantis?'),
      { toolCalls: [{ name: 'get_weather', arguments: { city: 'Atlantis' } }] },
      'I have no weather data for Atlantis; I know Paris, Oslo, Cairo and Tokyo.',
      routeTo('route_to_user', 'I have no weather data for Atlantis; I know Paris, Oslo, Cairo and Tokyo.'),
    ]);
    close = running.close;
    const body = (await (
      await post(running.server.url, { message: 'weather in Atlantis?' })
    ).json()) as ChatReply;
    expect(body.reply).toBe('I have no weather data for Atlantis; I know Paris, Oslo, Cairo and Tokyo.');
    running.model.assertDone();
    expect(running.model.requests[2]?.body.messages.at(-1)).toMatchObject({
      role: 'tool',
      content:
        "Error: 'get_weather' failed: no weather data for Atlantis; known cities: Paris, Oslo, Cairo, Tokyo",
    });
  });

  it('routes to the plain converter agent without calling the model for it', async () => {
    const running = await startWithScript([
      routeTo('converter', 'Convert 10 km to miles'),
      routeTo('route_to_user', '10 km is about 6.21 miles.'),
    ]);
    close = running.close;
    const body = (await (
      await post(running.server.url, { message: 'how many miles is 10 km?' })
    ).json()) as ChatReply;
    expect(body.reply).toBe('10 km is about 6.21 miles.');
    expect(body.steps.map((step) => step.calls[0]?.agent)).toEqual(['converter', 'route_to_user']);
    running.model.assertDone();
    expect(running.model.requests[1]?.body.messages.at(-1)).toEqual({
      role: 'user',
      content: '[Agent "converter" replied]\n10 km = 6.21 mi',
    });
  });

  it('falls back to a clear message when the model keeps answering with an unknown agent', async () => {
    const running = await startWithScript([
      routeTo('horoscope', 'Read my stars'),
      routeTo('horoscope', 'Read my stars'),
    ]);
    close = running.close;
    const body = (await (
      await post(running.server.url, { message: 'what do the stars say?' })
    ).json()) as ChatReply;
    expect(body.reply).toBe(FALLBACK_MESSAGE);
    running.model.assertDone();
    expect(running.model.requests[1]?.body.messages.at(-1)?.content).toMatch(
      /^"horoscope" is not an available agent/,
    );
  });

  it('streams the llm agent’s answer as agent-delta events over SSE', async () => {
    const chunks = ['It is 18 °C ', 'with light rain ', 'in Paris.'];
    const running = await startWithScript(weatherScript(chunks));
    close = running.close;
    const response = await post(
      running.server.url,
      { message: 'Paris weather?' },
      { accept: 'text/event-stream' },
    );
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = parseEvents(await response.text());
    running.model.assertDone();

    const deltas = events.filter((event) => event.event === 'agent-delta');
    expect(deltas.map((event) => event.data.delta)).toEqual(chunks);
    expect(deltas.every((event) => event.data.agent === 'weather')).toBe(true);
    expect(new Set(deltas.map((event) => event.data.messageId)).size).toBe(1);

    const types = events.map((event) => event.event);
    expect(types.indexOf('agent-start')).toBeLessThan(types.indexOf('agent-delta'));
    expect(types.lastIndexOf('agent-delta')).toBeLessThan(types.indexOf('agent-end'));
    expect(events.find((event) => event.event === 'agent-end')?.data).toMatchObject({
      agent: 'weather',
      status: 'ok',
      content: WEATHER_ANSWER,
    });
    expect(events.find((event) => event.event === 'message')?.data.content).toBe(WEATHER_ANSWER);
    expect(events.at(-1)).toMatchObject({
      event: 'turn-end',
      data: { status: 'completed', endOfDialog: true },
    });
  });
});
