import { type AgentMeta, toolCall } from '@switchboard/core';
import { KeywordOrchestrator } from '@switchboard/orchestrators';
import { type Agent, type AgentContext, agentMeta } from '@switchboard/runtime';
import { describe, expect, it } from 'vitest';
import { examplesOf } from '../src/agents/help/help-agent.js';
import {
  calculatorAgent,
  converterAgent,
  createClockAgent,
  createDemoAgents,
  createHelpAgent,
} from '../src/agents/index.js';

/** The least an agent's run() needs: the demo agents only read the message. */
function contextFor(agent: string, message: string): AgentContext {
  return {
    signal: new AbortController().signal,
    toolCall: toolCall(agent, message),
  } as unknown as AgentContext;
}

async function run(agent: Agent, message: string): Promise<string> {
  const reply = await agent.run(message, contextFor(agent.name, message));
  expect(typeof reply).toBe('string');
  return reply as string;
}

const NOW = new Date('2026-05-05T15:04:00Z');
const demoAgents = () => createDemoAgents({ clock: { now: () => NOW, timeZone: 'Europe/Paris' } });

/** The agent the demo's keyword router picks for a message, if any keyword matches. */
function route(agents: readonly AgentMeta[], message: string): string | undefined {
  return new KeywordOrchestrator({ agents }).score(message)[0]?.name;
}

describe('calculator agent', () => {
  it('answers with the expression and its value', async () => {
    expect(await run(calculatorAgent, 'what is 2 + 3 * 4?')).toBe('2 + 3 * 4 = 14');
    expect(await run(calculatorAgent, 'calculate (1+2)^3')).toBe('(1 + 2) ^ 3 = 27');
    expect(await run(calculatorAgent, '15% of 80')).toBe('15% of 80 = 12');
  });

  it('explains a problem in the reply instead of failing the turn', async () => {
    expect(await run(calculatorAgent, 'what is 1/0')).toBe(
      'Sorry, I could not calculate that: division by zero is undefined.',
    );
    expect(await run(calculatorAgent, 'hello')).toBe(
      'Sorry, I could not calculate that: there is no arithmetic expression in the message.',
    );
    expect(await run(calculatorAgent, '('.repeat(40))).toMatch(/^Sorry, I could not calculate that: /);
    expect(await run(calculatorAgent, 'x'.repeat(5000))).toBe(
      'Sorry, I could not calculate that: the message is too long (at most 1000 characters).',
    );
  });
});

describe('converter agent', () => {
  it('converts', async () => {
    expect(await run(converterAgent, 'convert 5 km to miles')).toBe('5 kilometers = 3.10686 miles');
    expect(await run(converterAgent, '72 fahrenheit in celsius')).toBe('72 °F = 22.2222 °C');
    expect(await run(converterAgent, 'how many ounces in 2 lb')).toBe('2 pounds = 32 ounces');
  });

  it('explains unknown and incompatible units', async () => {
    expect(await run(converterAgent, '5 kg to meters')).toBe(
      'Sorry, I could not convert that: cannot convert kilograms (mass) to meters (length).',
    );
    expect(await run(converterAgent, '3 parsecs to km')).toMatch(
      /^Sorry, I could not convert that: I don't know the unit 'parsecs'/,
    );
  });
});

describe('clock agent', () => {
  const clock = createClockAgent({ now: () => NOW, timeZone: 'Europe/Paris' });

  it('tells the time with the injected clock and zone', async () => {
    expect(await run(clock, 'what time is it?')).toBe(
      'It is 17:04 on Tuesday, 5 May 2026 (Europe/Paris, GMT+2).',
    );
    expect(await run(clock, 'time in Tokyo')).toBe(
      'It is 00:04 on Wednesday, 6 May 2026 in Tokyo (Asia/Tokyo, GMT+9).',
    );
    expect(await run(clock, 'how many days until 2026-12-25')).toBe(
      'There are 234 days until Friday, 25 December 2026.',
    );
  });

  it('reads the clock on every message', async () => {
    let now = NOW;
    const ticking = createClockAgent({ now: () => now, timeZone: 'UTC' });
    expect(await run(ticking, 'time')).toBe('It is 15:04 on Tuesday, 5 May 2026 (UTC).');
    now = new Date('2026-05-05T15:05:00Z');
    expect(await run(ticking, 'time')).toBe('It is 15:05 on Tuesday, 5 May 2026 (UTC).');
  });

  it('explains an unknown place', async () => {
    expect(await run(clock, 'time in Atlantis')).toMatch(
      /^Sorry, I don't know the time zone of Atlantis; I know: Tokyo, .*, such as Kolkata or Europe\/Paris\.$/,
    );
  });
});

describe('help agent', () => {
  it('lists the other agents with their descriptions and examples', async () => {
    const agents = demoAgents();
    const help = agents.find((agent) => agent.name === 'help') as Agent;
    const reply = await run(help, 'what can you do?');
    const lines = reply.split('\n');
    expect(lines[0]).toBe('I can pass your message to one of these agents:');
    expect(lines.slice(1, -1).map((line) => line.split(':')[0])).toEqual([
      '- clock',
      '- converter',
      '- calculator',
    ]);
    expect(reply).toContain('- calculator: Evaluates arithmetic');
    expect(reply).toContain('"convert 5 km to miles"');
    expect(reply).not.toContain('- help');
  });

  it('describes one agent when the message names it', async () => {
    const help = createHelpAgent(() => [agentMeta(calculatorAgent), agentMeta(converterAgent)]);
    const reply = await run(help, 'help with the calculator');
    expect(reply.split('\n')[0]).toBe(`calculator: ${calculatorAgent.description}`);
    expect(reply).toContain('Examples: "what is 2 + 3 * 4?"');
    expect(reply).toContain('I send it messages that mention: calculate, calculator');
  });

  it('sees agents added after it was created', async () => {
    const agents: AgentMeta[] = [];
    const help = createHelpAgent(() => agents);
    expect(await run(help, 'help')).toBe('No other agents are available right now.');
    agents.push({ name: 'weather', description: 'Forecasts.' });
    expect(await run(help, 'help')).toContain('- weather: Forecasts.');
  });
});

describe('the demo agents together', () => {
  it('are the clock, converter, calculator and help agents, in routing order', () => {
    expect(demoAgents().map((agent) => agent.name)).toEqual(['clock', 'converter', 'calculator', 'help']);
  });

  it('each have a description, keywords and example phrases', () => {
    for (const agent of demoAgents()) {
      expect(agent.description.length).toBeGreaterThan(20);
      expect(agent.keywords?.length).toBeGreaterThan(3);
      expect(examplesOf(agent).length).toBeGreaterThan(1);
    }
  });

  it('avoid keywords so generic that they would pull in unrelated messages', () => {
    const generic = [
      'in',
      'to',
      'of',
      'is',
      'the',
      'a',
      'what',
      'how',
      'and',
      'me',
      'many',
      'much',
      'convert to',
    ];
    for (const agent of demoAgents()) {
      expect((agent.keywords ?? []).filter((keyword) => generic.includes(keyword))).toEqual([]);
    }
  });

  it('route every advertised example, and typical questions, to the right agent by keywords', () => {
    const agents = demoAgents().map(agentMeta);
    for (const agent of agents) {
      for (const example of examplesOf(agent))
        expect([example, route(agents, example)]).toEqual([example, agent.name]);
    }
    const questions: Array<[string, string]> = [
      ['what is the time in Tokyo?', 'clock'],
      ['what is the date today', 'clock'],
      ['how many days until christmas', 'clock'],
      ['what is 5 km in miles', 'converter'],
      ['how many ounces in 2 lb', 'converter'],
      ['what is 12 times 7', 'calculator'],
      ['calculate the square root of 2', 'calculator'],
      ['what is 2 + 2', 'calculator'],
      ['help', 'help'],
      ['which agents do you have', 'help'],
    ];
    for (const [question, expected] of questions)
      expect([question, route(agents, question)]).toEqual([question, expected]);
  });
});
