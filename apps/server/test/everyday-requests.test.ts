/**
 * Thirty everyday requests, sent over HTTP to the demo server as it starts
 * by default (`ORCHESTRATOR=keyword`, the offline agents, no model), each
 * with the agent that must answer it and the answer. Arithmetic, tips,
 * units, the time in cities written in any script, dates, and questions the
 * demo cannot answer, which go to the help agent to say so, rather than to
 * an agent that would guess. A greeting is greeted, with the same list.
 */
import type { TurnResult } from '@switchboard/runtime';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServerApp, type ServerApp } from '../src/build-app.js';
import { readConfig } from '../src/config.js';

/** Tuesday 5 May 2026, 15:04 UTC; the server runs in UTC, as in most containers. */
const NOW = new Date('2026-05-05T15:04:00Z');

/** What the help agent answers to a question no agent here can answer. */
const CANNOT_ANSWER =
  /^I can't answer that: none of the agents here does\. They can:\n- clock: .+\n- converter: .+\n- calculator: .+$/;

/** What the help agent answers to a greeting: a greeting, then what the agents can do. */
const GREETED =
  /^Hello! I can pass your message to one of these agents:\n- clock: .+\n- converter: .+\n- calculator: .+$/;

const REQUESTS: ReadonlyArray<[message: string, agent: string, answer: string | RegExp]> = [
  // Arithmetic, percentages and tips.
  ["what's 15% of 80?", 'calculator', '15% of 80 = 12'],
  ["What's a 20% tip on $45?", 'calculator', '20% tip on $45 = $9 (total $54)'],
  ['tip 18% on a $62.50 bill', 'calculator', '18% tip on $62.50 = $11.25 (total $73.75)'],
  ["what's 25% off 80?", 'calculator', '80 - 25% = 60'],
  ['what is 2 + 3 * 4?', 'calculator', '2 + 3 * 4 = 14'],
  ['how much is 12 times 7?', 'calculator', '12 * 7 = 84'],
  ["what's 100/8?", 'calculator', '100 / 8 = 12.5'],
  ["what's 2 to the power of 10?", 'calculator', '2 ^ 10 = 1024'],
  ['square root of 144', 'calculator', 'sqrt 144 = 12'],
  ['1,250 minus 380', 'calculator', '1,250 - 380 = 870'],
  // Units.
  ['convert 5 km to miles', 'converter', '5 kilometers = 3.10686 miles'],
  ["what's 72°F in Celsius?", 'converter', '72 °F = 22.2222 °C'],
  ['how many ounces in 2 lb?', 'converter', '2 pounds = 32 ounces'],
  ["what's 10 kg in pounds?", 'converter', '10 kilograms = 22.0462 pounds'],
  ['100 km/h in mph', 'converter', '100 km/h = 62.1371 mph'],
  // The time, in cities written in any script, and dates.
  ['what time is it?', 'clock', 'It is 15:04 on Tuesday, 5 May 2026 (UTC).'],
  [
    'what time is it in Tokyo?',
    'clock',
    'It is 00:04 on Wednesday, 6 May 2026 in Tokyo (Asia/Tokyo, GMT+9).',
  ],
  ['time in 東京', 'clock', 'It is 00:04 on Wednesday, 6 May 2026 in 東京 (Asia/Tokyo, GMT+9).'],
  [
    'what time is it in New York?',
    'clock',
    'It is 11:04 on Tuesday, 5 May 2026 in New York (America/New_York, GMT-4).',
  ],
  [
    "what's the time in São Paulo?",
    'clock',
    'It is 12:04 on Tuesday, 5 May 2026 in São Paulo (America/Sao_Paulo, GMT-3).',
  ],
  ['time in Москва', 'clock', 'It is 18:04 on Tuesday, 5 May 2026 in Москва (Europe/Moscow, GMT+3).'],
  [
    'what time is it in Atlantis?',
    'clock',
    /^Sorry, I don't know the time zone of Atlantis; I know: Tokyo, .*New York, .*Europe\/Paris\.$/,
  ],
  ["what's the date today?", 'clock', 'Today is Tuesday, 5 May 2026 (UTC).'],
  ['how many days until Christmas?', 'clock', 'There are 234 days until Friday, 25 December 2026.'],
  ['what day of the week is July 4, 2026?', 'clock', '4 July 2026 is a Saturday.'],
  ["what's the date 30 days from now?", 'clock', '30 days from today is Thursday, 4 June 2026.'],
  // Questions the demo cannot answer: said so, with what it can do.
  ["what's the capital of France?", 'help', CANNOT_ANSWER],
  ['who wrote Hamlet?', 'help', CANNOT_ANSWER],
  ["what's the weather like in Paris?", 'help', CANNOT_ANSWER],
  ["what's the population of Tokyo?", 'help', CANNOT_ANSWER],
  // A greeting is greeted, with what the agents can do.
  ['hi', 'help', GREETED],
  ['Hello there!', 'help', GREETED],
  ['good morning', 'help', GREETED],
];

describe('the default demo server answers everyday requests', () => {
  let server: ServerApp;

  beforeAll(() => {
    server = buildServerApp(readConfig({}), {
      agents: { clock: { now: () => NOW, timeZone: 'UTC' } },
      logger: pino({ level: 'silent' }),
    });
    server.app.mount(server.orchestrator);
  });
  afterAll(() => server.app.close());

  async function chat(message: string): Promise<TurnResult> {
    const response = await server.app.request('/v1/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message }),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as TurnResult;
  }

  it('routes with keywords by default', () => {
    expect(server.orchestrator.name).toBe('keyword');
  });

  it.each(REQUESTS)('%s → %s', async (message, agent, answer) => {
    const body = await chat(message);
    expect(body.status).toBe('completed');
    expect(body.steps.map((step) => [step.kind, step.calls.map((call) => call.agent)])).toEqual([
      ['call', [agent]],
      ['answer', ['route_to_user']],
    ]);
    if (typeof answer === 'string') expect(body.reply).toBe(answer);
    else expect(body.reply).toMatch(answer);
  });

  it('never answers a place it does not know with the time of its own zone', async () => {
    for (const [message, place] of [
      ['time in 火星', '火星'],
      ['what time is it in Springfield?', 'Springfield'],
    ] as const) {
      const body = await chat(message);
      expect(body.steps[0]?.calls.map((call) => call.agent)).toEqual(['clock']);
      expect(body.reply).toMatch(
        new RegExp(`^Sorry, I don't know the time zone of ${place}; I know: Tokyo, `),
      );
      expect(body.reply).not.toContain('UTC');
    }
  });

  it('asks for what is missing from a tip instead of guessing a rate', async () => {
    const body = await chat('what tip should I leave on $80?');
    expect(body.steps[0]?.calls.map((call) => call.agent)).toEqual(['calculator']);
    expect(body.reply).toBe(
      "Sorry, I could not calculate that: I need the tip rate and the bill, e.g. 'a 20% tip on $45'.",
    );
  });
});
