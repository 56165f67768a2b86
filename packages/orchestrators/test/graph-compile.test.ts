import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { END, type GraphBuilder, GraphCompileError, type GraphState, stateGraph } from '../src/index.js';

const State = z.object({ text: z.string(), items: z.array(z.string()).default([]) });
const base = () => stateGraph({ name: 'checked', state: State, input: (message) => ({ text: message }) });
const noop = () => ({});

function compileError(build: () => unknown): string {
  try {
    build();
  } catch (error) {
    expect(GraphCompileError.isInstance(error)).toBe(true);
    return (error as Error).message;
  }
  throw new Error('compile() did not fail');
}

describe('stateGraph compile()', () => {
  it('fails with one clear error per problem', () => {
    expect(compileError(() => base().node('a', noop).compile())).toBe(
      "Graph 'checked': it has no entry node: call .entry(name)",
    );
    // Each misspelt name below is a type error too (see the next test): checked here as a name known at run time would be.
    // @ts-expect-error 'b' is not a node
    expect(compileError(() => base().node('a', noop).entry('b').compile())).toBe(
      "Graph 'checked': the entry 'b' is not a node (nodes: a)",
    );
    // @ts-expect-error 'ghost' is not a node
    expect(compileError(() => base().node('a', noop).entry('a').edge('a', 'ghost').compile())).toBe(
      "Graph 'checked': the edge a → ghost names an unknown node 'ghost' (nodes: a)",
    );
    expect(
      compileError(() =>
        base()
          .node('a', noop)
          .entry('a')
          // @ts-expect-error 'b' is not a node
          .conditionalEdge('a', () => 'b', ['b'])
          .compile(),
      ),
    ).toBe("Graph 'checked': the conditional edge from 'a' names an unknown node 'b' (nodes: a)");
    expect(compileError(() => base().node('a', noop).node('b', noop).entry('a').compile())).toBe(
      "Graph 'checked': node 'b' is unreachable from the entry 'a'",
    );
    // @ts-expect-error an edge leaves a node, never the end
    expect(compileError(() => base().node('a', noop).entry('a').edge(END, 'a').compile())).toBe(
      "Graph 'checked': an edge leaves the end (__end__ → a): nothing runs after the end",
    );
    expect(compileError(() => base().node('a', noop).node('a', noop).entry('a').compile())).toBe(
      "Graph 'checked': two nodes are named 'a'",
    );
    expect(
      compileError(() =>
        base()
          .agentNode('a', { agent: 'nobody', task: (s) => s.text })
          .entry('a')
          .compile({ agents: [{ name: 'somebody', description: '' }] }),
      ),
    ).toBe("Graph 'checked': node 'a' calls agent 'nobody', which is not one of its agents (somebody)");
    expect(
      compileError(() =>
        stateGraph({ name: 'r', state: State, reducers: { missing: 'append' } as never })
          .node('a', noop)
          .entry('a')
          .compile(),
      ),
    ).toContain("a reducer is given for 'missing', which the state does not have");
  });

  it('knows its node names: a misspelt one in an edge, a conditional edge or the entry does not type-check', () => {
    const drafted = () => base().node('draft', noop).node('review', noop).entry('draft');
    // @ts-expect-error 'reveiw' is not 'draft' | 'review'
    const typo = () => drafted().edge('draft', 'reveiw');
    expect(compileError(() => typo().compile())).toBe(
      "Graph 'checked': the edge draft → reveiw names an unknown node 'reveiw' (nodes: draft, review)",
    );
    // @ts-expect-error nor is 'draf'
    expect(compileError(() => drafted().edge('draf', 'review').compile())).toContain("unknown node 'draf'");
    // @ts-expect-error one misspelt target among several
    expect(compileError(() => drafted().edge('draft', ['review', 'reveiw']).compile())).toContain(
      "unknown node 'reveiw'",
    );
    expect(
      compileError(() =>
        drafted()
          // @ts-expect-error a conditional edge's targets too
          .conditionalEdge('draft', () => 'review', ['reveiw', END])
          .compile(),
      ),
    ).toContain("unknown node 'reveiw'");
    // @ts-expect-error the entry too
    expect(compileError(() => drafted().entry('drfat').compile())).toContain(
      "the entry 'drfat' is not a node",
    );
    // @ts-expect-error the builder knows the nodes added before: nodes first, then the edges
    base().entry('draft');
    // The names it knows, and END as a target, type-check and compile.
    const graph = drafted().edge('draft', ['review']).edge('review', END).compile();
    expect(graph.view.edges).toEqual([
      { from: 'draft', to: 'review' },
      { from: 'review', to: END },
    ]);
  });

  it('checks at compile() the names it only learns at run time', () => {
    const names: string[] = ['draft', 'review'];
    // Reassigned in a loop: typed for any names.
    let graph: GraphBuilder<z.infer<typeof State> & GraphState> = base();
    for (const name of names) graph = graph.node(name, noop);
    graph.entry('draft').edge('draft', 'reveiw');
    expect(compileError(() => graph.compile())).toBe(
      "Graph 'checked': the edge draft → reveiw names an unknown node 'reveiw' (nodes: draft, review)",
    );
  });

  it('draws the graph as Mermaid: node kinds, conditional edges dotted, approvals and a highlighted path', () => {
    const graph = base()
      .agentNode('classify', { agent: 'classifier', task: (s) => s.text, into: 'text' })
      .node('billing', noop)
      .node('technical', noop, { approval: true })
      .inputNode('ask', { ask: () => 'which order?', update: (answer) => ({ text: answer }) })
      .entry('classify')
      .conditionalEdge('classify', () => 'billing', ['billing', 'technical'])
      .edge('billing', 'ask')
      .edge('technical', END)
      .compile();
    expect(graph.toMermaid({ highlight: ['classify', 'billing'] })).toBe(
      [
        'flowchart TD',
        '  START([start]):::terminal --> n_classify',
        '  n_classify[classify]',
        '  n_billing(billing)',
        '  n_technical(technical)',
        '  n_ask[/ask/]',
        '  n_classify -.-> n_billing',
        '  n_classify -.-> n_technical',
        '  n_billing --> n_ask',
        '  n_technical --> END',
        '  n_ask --> END',
        '  END([end]):::terminal',
        '  classDef terminal fill:#eef,stroke:#557',
        '  classDef approval stroke:#b60,stroke-width:2px',
        '  classDef taken fill:#ffe9a8,stroke:#b80,stroke-width:3px',
        '  class n_technical approval',
        '  class n_classify,n_billing taken',
        '',
      ].join('\n'),
    );
    expect(graph.view.edges).toContainEqual({ from: 'classify', to: 'technical', conditional: true });
    expect(graph.view.nodes.find((node) => node.name === 'technical')).toEqual({
      name: 'technical',
      kind: 'function',
      approval: true,
    });
  });

  it('hosts one agent per function node, named after the graph', () => {
    const graph = base().node('a', noop).node('b', noop).entry('a').edge('a', 'b').compile();
    expect(graph.hostedAgents.map((agent) => agent.name)).toEqual(['checked__a', 'checked__b']);
    expect(graph.agents.map((agent) => agent.name)).toEqual(['checked__a', 'checked__b']);
  });
});
