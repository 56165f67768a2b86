import { App, agentMeta, defineAgent } from '@switchboard/runtime';
import { recordSpans } from '@switchboard/runtime/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { stateGraph } from '../src/index.js';

const recording = recordSpans();
afterAll(() => recording.shutdown());

describe('stateGraph traces', () => {
  it('traces each function node as a span under its agent call, its state as input and its update as output', async () => {
    const graph = stateGraph({
      name: 'traced',
      state: z.object({ text: z.string(), length: z.number().optional() }),
      input: (message) => ({ text: message }),
    })
      .node('measure', (state) => ({ length: state.text.length }))
      .entry('measure')
      .respond((state) => `${state.length}`)
      .compile();
    const app = new App({ name: 'traced-app', agents: [], logLevel: 'silent' }).mount(graph);
    const result = await app.chat({ message: 'hello' });
    await app.close();
    expect(result.reply).toBe('5');
    const [node] = recording.named('graph node measure');
    expect(node).toBeDefined();
    expect(JSON.parse(String(node?.attributes['langfuse.observation.input']))).toEqual({ text: 'hello' });
    expect(JSON.parse(String(node?.attributes['langfuse.observation.output']))).toEqual({ length: 5 });
    const agent = recording.parentOf(node!);
    expect(agent?.name).toBe('agent traced__measure');
    // The agent call sits in the decision of the turn, as every agent call does.
    let root = agent;
    while (root && recording.parentOf(root)) root = recording.parentOf(root);
    expect(root?.attributes['session.id']).toBe(result.sessionId);
  });

  it('traces an agent node’s state change as a span in the decision that applies it: the reply in, the update out', async () => {
    recording.reset();
    const upper = defineAgent({
      name: 'upper',
      description: 'Upper-cases',
      run: (message) => message.toUpperCase(),
    });
    const graph = stateGraph({
      name: 'shouting',
      state: z.object({ text: z.string(), loud: z.string().optional() }),
      input: (message) => ({ text: message }),
    })
      .agentNode('shout', { agent: 'upper', task: (state) => state.text, into: 'loud' })
      .entry('shout')
      .compile({ agents: [agentMeta(upper)] });
    const app = new App({ name: 'shouting-app', agents: [upper], logLevel: 'silent' }).mount(graph);
    expect((await app.chat({ message: 'hey' })).reply).toBe('HEY');
    await app.close();
    const spans = recording.named('graph node shout');
    expect(spans).toHaveLength(1);
    expect(JSON.parse(String(spans[0]?.attributes['langfuse.observation.input']))).toBe('HEY');
    expect(JSON.parse(String(spans[0]?.attributes['langfuse.observation.output']))).toEqual({ loud: 'HEY' });
    expect(recording.parentOf(spans[0]!)?.name).toMatch(/^route /);
  });
});
