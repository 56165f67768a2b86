import { App, defineAgent } from '@switchboard/runtime';
import { describe, expect, it } from 'vitest';
import { greeter, reverser } from '../src/agents.js';
import { KeywordRouter } from '../src/keyword-router.js';

const morning = defineAgent({
  name: 'morning',
  description: 'Greets the early risers',
  keywords: ['Good Morning'],
  run: () => 'Morning! Coffee is on.',
});

/** The README's router over the example's agents, as `src/main.ts` starts it, without a port. */
function appWithRouter() {
  return new App({
    name: 'custom-orchestrator',
    agents: [greeter, reverser, morning],
    logLevel: 'silent',
  }).mount(KeywordRouter);
}

/** The agent a message was routed to, or `undefined` when the router answered itself. */
async function routedTo(app: App, message: string) {
  const turn = await app.chat({ message });
  const call = turn.steps.find((step) => step.kind === 'call');
  return { agent: call?.calls[0]?.agent, reply: turn.reply };
}

describe('the README keyword router', () => {
  it('matches whole words: "this" and "shipping" do not reach the agent keyed "hi"', async () => {
    const app = appWithRouter();
    try {
      for (const message of ['is this thing on?', 'shipping to Chile', 'Which one?', 'hierarchy']) {
        expect(await routedTo(app, message)).toEqual({
          agent: undefined,
          reply: 'I can route to: greeter, reverser, morning. What would you like?',
        });
      }
    } finally {
      await app.close();
    }
  });

  it('matches a keyword in any case, next to punctuation, and a keyword phrase', async () => {
    const app = appWithRouter();
    try {
      expect(await routedTo(app, 'Hi!')).toEqual({ agent: 'greeter', reply: 'Hello! Nice to meet you.' });
      expect((await routedTo(app, 'well, HELLO there')).agent).toBe('greeter');
      expect(await routedTo(app, 'good  morning, team')).toEqual({
        agent: 'morning',
        reply: 'Morning! Coffee is on.',
      });
      expect((await routedTo(app, 'a good day this morning')).agent).toBeUndefined();
    } finally {
      await app.close();
    }
  });

  it('hands the agent the message as the user wrote it', async () => {
    const app = appWithRouter();
    try {
      expect(await routedTo(app, 'Please REVERSE AbC')).toEqual({ agent: 'reverser', reply: 'CbA' });
    } finally {
      await app.close();
    }
  });
});
