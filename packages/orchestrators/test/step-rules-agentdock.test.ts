import { readFile } from 'node:fs/promises';
import type { AgentMeta } from '@switchboard/core';
import { App, defineAgent } from '@switchboard/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { withSteps } from '../src/index.js';
import { ObedientRouter } from './support/shop-steps.js';

const TEMPLATE = new URL('./fixtures/agentdock-travel-desk.json', import.meta.url);

const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

describe('withSteps with an AgentDock orchestration configuration', () => {
  it('runs an AgentDock template’s orchestration as it is: tool_used, availableTools, sequence, default', async () => {
    const template = JSON.parse(await readFile(TEMPLATE, 'utf8'));
    // The template's tools (its nodes, without the model) become agents.
    const agents: AgentMeta[] = (template.nodes as string[])
      .filter((node) => !node.startsWith('llm.'))
      .map((name) => ({ name, description: `The ${name} tool` }));
    const router = new ObedientRouter(agents);
    const orchestrator = withSteps(router, template.orchestration);
    const runs: string[] = [];
    const app = new App({
      name: 'travel-desk',
      agents: agents.map((meta) =>
        defineAgent({
          ...meta,
          run: () => {
            runs.push(meta.name);
            return `${meta.name} done`;
          },
        }),
      ),
      logLevel: 'silent',
    }).mount(orchestrator);
    apps.push(app);

    expect(orchestrator.stepNames).toEqual(['Booking', 'Research', 'Greeting']);
    expect(orchestrator.description).toBe(
      'Guides the agent from research to a booking. A booking always goes flights, hotels, then the booking itself.',
    );
    const results = [];
    for (const message of [
      'support: hello',
      'flights: Lisbon in May',
      'think: weigh the two options',
      'book: now',
      'book: now',
      'book: now',
      'invoice: please',
    ]) {
      results.push(await app.chat({ sessionId: 'traveller', message }));
    }

    expect(router.candidates.filter((_, index) => index % 2 === 0)).toEqual([
      ['search', 'think', 'support'],
      ['search', 'think', 'support'],
      ['search', 'think'],
      ['flights'],
      ['hotels'],
      ['book'],
      ['invoice', 'support'],
    ]);
    expect(runs).toEqual(['support', 'search', 'think', 'flights', 'hotels', 'book', 'invoice']);
    expect(results.map((result) => result.steps[0]?.annotations?.activeStep)).toEqual([
      'Greeting',
      'Greeting',
      'Research',
      'Booking',
      'Booking',
      'Booking',
      'Booking',
    ]);
    expect(results[3]?.steps[0]?.annotations?.stepReason).toBe('conditions hold: The options were weighed');
  });

  it('uses a step’s own sequence for a sequence_match condition without one, as AgentDock does', async () => {
    const agents: AgentMeta[] = ['search', 'think', 'summarize', 'support'].map((name) => ({
      name,
      description: name,
    }));
    const router = new ObedientRouter(agents);
    const orchestrator = withSteps(router, {
      steps: [
        {
          name: 'Follow-up',
          description: 'After a search was thought through',
          conditions: [{ type: 'sequence_match' }],
          sequence: ['search', 'think'],
          availableTools: { allowed: ['support'] },
        },
        {
          name: 'Default',
          description: 'Anything',
          isDefault: true,
          availableTools: { denied: ['support'] },
        },
      ],
    });
    const app = new App({
      name: 'research',
      agents: agents.map((meta) => defineAgent({ ...meta, run: () => `${meta.name} done` })),
      logLevel: 'silent',
    }).mount(orchestrator);
    apps.push(app);
    const chat = (message: string) => app.chat({ sessionId: 's', message });

    await chat('search: solar panels');
    const thought = await chat('think: which is best');
    // Entering the step starts its sequence, as AgentDock resets the sequence index on a transition.
    expect(thought.steps.map((step) => step.annotations?.activeStep)).toEqual(['Default', 'Follow-up']);
    expect(thought.steps[1]?.annotations?.allowedAgents).toEqual(['search']);
  });
});
