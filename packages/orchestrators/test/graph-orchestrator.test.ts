import { type Agent, App, agentMeta, defineAgent, orchestratorAgent } from '@switchboard/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { END, KeywordOrchestrator, SequentialOrchestrator, stateGraph, withSteps } from '../src/index.js';

const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

function host(agents: Agent[], graph: Parameters<App['mount']>[0], maxHops = 40): App {
  const app = new App({
    name: 'graph-test',
    agents,
    logLevel: 'silent',
    maxHops,
    exposeErrorDetails: true,
  }).mount(graph);
  apps.push(app);
  return app;
}

const classifier = defineAgent({
  name: 'classifier',
  description: 'Says billing or technical',
  run: (message) => (/refund|invoice/i.test(message) ? 'billing' : 'technical'),
});

const Ticket = z.object({
  question: z.string(),
  kind: z.enum(['billing', 'technical']).optional(),
  notes: z.array(z.string()).default([]),
  profile: z.record(z.string(), z.string()).default({}),
  count: z.number().int().default(0),
});

describe('stateGraph: nodes and edges', () => {
  it('runs an agent node, a conditional edge and function nodes (sync and async), answering with respond', async () => {
    const graph = stateGraph({ name: 'triage', state: Ticket, input: (message) => ({ question: message }) })
      .agentNode('classify', {
        agent: 'classifier',
        task: (state) => state.question,
        update: (reply) => ({ kind: reply.trim() as 'billing' | 'technical' }),
      })
      .node('billing', (state) => ({ notes: [`refund desk for "${state.question}"`] }))
      .node('technical', async (state) => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        return { notes: [`tech desk for "${state.question}"`] };
      })
      .entry('classify')
      .conditionalEdge('classify', (state) => (state.kind === 'billing' ? 'billing' : 'technical'), [
        'billing',
        'technical',
      ])
      .respond((state) => `${state.kind}: ${state.notes.join('; ')}`)
      .compile({ agents: [agentMeta(classifier)] });
    const app = host([classifier], graph);
    const billing = await app.chat({ message: 'I want a refund' });
    expect(billing.status).toBe('completed');
    expect(billing.reply).toBe('billing: refund desk for "I want a refund"');
    const technical = await app.chat({ message: 'the app crashes' });
    expect(technical.reply).toBe('technical: tech desk for "the app crashes"');
    // Each step is annotated with its graph step and node; the answer with the path.
    const annotated = technical.steps.map(
      (step) => step.annotations?.graphNodes ?? step.annotations?.graphPath,
    );
    expect(annotated).toEqual([['classify'], ['technical'], ['classify', 'technical']]);
  });

  it('runs a nested orchestrator node with its own agents, and answers with the last node output by default', async () => {
    const draft = defineAgent({
      name: 'draft',
      description: 'drafts',
      run: (message) => `draft(${message})`,
    });
    const polish = defineAgent({
      name: 'polish',
      description: 'polishes',
      run: (message) => `polished ${message}`,
    });
    const pipeline = new SequentialOrchestrator({
      name: 'writing',
      agents: [draft, polish].map(({ name, description }) => ({ name, description })),
    });
    const graph = stateGraph({
      name: 'writer',
      state: z.object({ topic: z.string(), text: z.string().optional() }),
      input: (message) => ({ topic: message }),
    })
      .node('pick', () => ({ topic: 'graphs' }))
      .orchestratorNode('write', {
        orchestrator: pipeline,
        agents: [draft, polish],
        task: (s) => s.topic,
        into: 'text',
      })
      .entry('pick')
      .edge('pick', 'write')
      .edge('write', END)
      .compile();
    const app = host([], graph);
    const result = await app.chat({ message: 'go' });
    expect(result.status).toBe('completed');
    expect(result.reply).toBe('polished draft(graphs)');
    const write = result.steps.find((step) => step.annotations?.graphNodes?.toString() === 'write');
    expect(write?.calls[0]?.innerSteps?.map((step) => step.calls[0]?.agent)).toEqual([
      'draft',
      'polish',
      'route_to_user',
    ]);
  });

  it('runs the targets of a parallel step as one fan-out whose branches overlap in time, joining before the next node', async () => {
    const spans: Record<string, [number, number]> = {};
    const timed = (name: string) => async () => {
      const started = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 40));
      spans[name] = [started, performance.now()];
      return { notes: [name] };
    };
    const graph = stateGraph({
      name: 'fan',
      state: Ticket,
      reducers: { notes: 'append' },
      input: (m) => ({ question: m }),
    })
      .node('start', () => ({ count: 0 }))
      .node('account', timed('account'))
      .node('kb', timed('kb'))
      .node('join', (state) => ({ count: state.notes.length }))
      .entry('start')
      .edge('start', ['account', 'kb'])
      .edge('account', 'join')
      .edge('kb', 'join')
      .respond((state) => `${state.notes.join('+')} = ${state.count}`)
      .compile();
    const result = await host([], graph).chat({ message: 'x' });
    expect(result.reply).toBe('account+kb = 2');
    const kinds = result.steps.map((step) => step.kind);
    expect(kinds).toEqual(['call', 'fan-out', 'call', 'answer']);
    const [a, b] = [spans.account!, spans.kb!];
    // Overlap: each branch started before the other ended.
    expect(a[0]).toBeLessThan(b[1]);
    expect(b[0]).toBeLessThan(a[1]);
    // The join ran once, after both.
    expect(result.steps[2]?.annotations?.graphNodes).toEqual(['join']);
  });

  it('runs the several nodes a conditional edge picks as one parallel step, and fails a route that picks an undeclared node', async () => {
    const graph = (pick: (question: string) => string | string[]) =>
      stateGraph({
        name: 'pick',
        state: Ticket,
        reducers: { notes: 'append' },
        input: (m) => ({ question: m }),
      })
        .node('start', () => ({}))
        .node('a', () => ({ notes: ['a'] }))
        .node('b', () => ({ notes: ['b'] }))
        .entry('start')
        .conditionalEdge('start', (state) => pick(state.question), ['a', 'b', END])
        .respond((state) => state.notes.join('+') || 'none')
        .compile();
    const both = await host(
      [],
      graph(() => ['a', 'b']),
    ).chat({ message: 'x' });
    expect(both.reply).toBe('a+b');
    expect(both.steps[1]).toMatchObject({ kind: 'fan-out', annotations: { graphNodes: ['a', 'b'] } });
    expect(
      (
        await host(
          [],
          graph(() => END),
        ).chat({ message: 'x' })
      ).reply,
    ).toBe('none');
    const stray = await host(
      [],
      graph(() => 'c'),
    ).chat({ message: 'x' });
    expect(stray.status).toBe('failed');
    expect(stray.error?.message).toContain("its route chose 'c', not one of a, b, __end__)");
  });

  it('loops until a condition holds, and stops a loop that does not end at maxSteps with a clear error', async () => {
    const counter = (limit: number, maxSteps: number) =>
      stateGraph({ name: 'loop', state: Ticket, maxSteps, input: (message) => ({ question: message }) })
        .node('tick', (state) => ({ count: state.count + 1 }))
        .entry('tick')
        .conditionalEdge('tick', (state) => (state.count < limit ? 'tick' : END), ['tick', END])
        .respond((state) => `counted ${state.count}`)
        .compile();
    const ends = await host([], counter(3, 10)).chat({ message: 'count' });
    expect(ends.reply).toBe('counted 3');
    const endless = await host([], counter(1000, 4)).chat({ message: 'count' });
    expect(endless.status).toBe('failed');
    expect(endless.error?.code).toBe('graph_step_limit');
    expect(endless.steps.filter((step) => step.annotations?.graphNodes)).toHaveLength(4);
  });

  it('answers with the state so far at the step limit when onStepLimit is respond', async () => {
    const graph = stateGraph({
      name: 'partial',
      state: Ticket,
      maxSteps: 3,
      onStepLimit: 'respond',
      input: (m) => ({ question: m }),
    })
      .node('tick', (state) => ({ count: state.count + 1 }))
      .entry('tick')
      .edge('tick', 'tick')
      .respond((state) => `stopped at ${state.count}`)
      .compile();
    const result = await host([], graph).chat({ message: 'go' });
    expect(result.status).toBe('completed');
    expect(result.reply).toBe('stopped at 3');
    expect(result.steps.at(-1)?.annotations?.graphLimit).toBe(true);
  });
});

describe('stateGraph: state', () => {
  it('combines updates with replace (default), append, merge and a custom reducer', async () => {
    const graph = stateGraph({
      name: 'reduce',
      state: Ticket,
      reducers: {
        notes: 'append',
        profile: 'merge',
        count: (current, update) => (current as number) + (update as number),
      },
      input: (message) => ({ question: message }),
    })
      .node('one', () => ({ question: 'replaced', notes: ['a'], profile: { plan: 'pro' }, count: 2 }))
      .node('two', () => ({ notes: ['b', 'c'], profile: { region: 'eu' }, count: 5 }))
      .entry('one')
      .edge('one', 'two')
      .respond((state) => JSON.stringify(state))
      .compile();
    const result = await host([], graph).chat({ message: 'original' });
    expect(JSON.parse(result.reply)).toEqual({
      question: 'replaced',
      notes: ['a', 'b', 'c'],
      profile: { plan: 'pro', region: 'eu' },
      count: 7,
    });
  });

  it('fails the node whose update breaks the schema, with the schema issue, and runs nothing after it', async () => {
    let after = 0;
    const graph = stateGraph({ name: 'strict', state: Ticket, input: (message) => ({ question: message }) })
      .node('bad', () => ({ count: 'many' }) as never)
      .node('after', () => {
        after += 1;
        return {};
      })
      .entry('bad')
      .edge('bad', 'after')
      .compile();
    const result = await host([], graph).chat({ message: 'x' });
    expect(result.status).toBe('failed');
    expect(after).toBe(0);
    const reply = result.steps.find((step) => step.annotations?.graphNodes)?.calls[0];
    expect(reply?.agent).toBe('strict__bad');
    expect(result.steps.at(-1)?.annotations?.graphFailed).toBe('bad');
    expect(result.error?.message).toContain('count: Invalid input: expected number, received string');
  });

  it('rejects an update with a key the state does not have, and an agent node mapping that breaks the schema', async () => {
    const unknownKey = stateGraph({
      name: 'keys',
      state: Ticket,
      input: (message) => ({ question: message }),
    })
      .node('typo', () => ({ nots: ['x'] }) as never)
      .entry('typo')
      .compile();
    expect((await host([], unknownKey).chat({ message: 'x' })).status).toBe('failed');
    const unsure = defineAgent({ name: 'unsure', description: 'Cannot tell', run: () => 'no idea' });
    const badMapping = stateGraph({
      name: 'mapping',
      state: Ticket,
      input: (message) => ({ question: message }),
    })
      .agentNode('classify', {
        agent: 'unsure',
        task: (s) => s.question,
        update: (reply) => ({ kind: reply as 'billing' }),
      })
      .entry('classify')
      .compile({ agents: [agentMeta(unsure)] });
    const failed = await host([unsure], badMapping).chat({ message: 'my screen is broken' });
    expect(failed.status).toBe('failed');
    expect(failed.error?.code).toBe('invalid_graph_state');
  });

  it('carries the state into the session’s next turn when carryState is set', async () => {
    const graph = stateGraph({
      name: 'memo',
      state: Ticket,
      reducers: { notes: 'append' },
      carryState: true,
      input: (m) => ({ question: m }),
    })
      .node('remember', (state) => ({ notes: [state.question] }))
      .entry('remember')
      .respond((state) => state.notes.join(', '))
      .compile();
    const app = host([], graph);
    const first = await app.chat({ message: 'one' });
    const second = await app.chat({ sessionId: first.sessionId, message: 'two' });
    expect(second.reply).toBe('one, two');
  });
});

describe('stateGraph: hosting', () => {
  it('runs inside a wrapper when the app hosts the graph’s own agents itself', async () => {
    const graph = stateGraph({ name: 'wrapped', state: Ticket, input: (m) => ({ question: m }) })
      .node('note', (state) => ({ notes: [`noted: ${state.question}`] }))
      .entry('note')
      .respond((state) => state.notes.join(''))
      .compile();
    const wrapper = withSteps(graph, {
      steps: [{ name: 'only', description: 'Every agent', isDefault: true }],
    });
    const app = host([...graph.hostedAgents], wrapper);
    expect((await app.chat({ message: 'hi' })).reply).toBe('noted: hi');
    // Mounted directly, the same agents hosted by the app are not a clash.
    expect((await host([...graph.hostedAgents], graph).chat({ message: 'yo' })).reply).toBe('noted: yo');
  });
});

describe('stateGraph: nested as an agent', () => {
  it('runs as an orchestrator agent of a keyword router, its function nodes hosted with it', async () => {
    const graph = stateGraph({
      name: 'inner',
      state: Ticket,
      input: (m) => ({ question: m }),
      reducers: { notes: 'append' },
    })
      .agentNode('classify', {
        agent: 'classifier',
        task: (s) => s.question,
        update: (r) => ({ kind: r as 'billing' }),
      })
      .node('note', (state) => ({ notes: [`${state.kind} ticket`] }))
      .entry('classify')
      .edge('classify', 'note')
      .respond((state) => state.notes.join(''))
      .compile({ agents: [agentMeta(classifier)] });
    const support = orchestratorAgent({
      name: 'support',
      description: 'Support desk',
      keywords: ['refund'],
      orchestrator: graph,
      agents: [classifier],
      maxHops: 10,
    });
    const front = new KeywordOrchestrator({
      name: 'front',
      agents: [{ name: 'support', description: 'Support desk', keywords: ['refund'] }],
    });
    const result = await host([support], front).chat({ message: 'a refund please' });
    expect(result.status).toBe('completed');
    expect(result.reply).toBe('billing ticket');
    const inner = result.steps[0]?.calls[0]?.innerSteps?.map((step) => step.calls[0]?.agent);
    expect(inner).toEqual(['classifier', 'inner__note', 'route_to_user']);
  });
});
