import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { END, GraphCompileError, stateGraph } from '../src/index.js';

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
    expect(compileError(() => base().node('a', noop).entry('b').compile())).toBe(
      "Graph 'checked': the entry 'b' is not a node (nodes: a)",
    );
    expect(compileError(() => base().node('a', noop).entry('a').edge('a', 'ghost').compile())).toBe(
      "Graph 'checked': the edge a → ghost names an unknown node 'ghost'",
    );
    expect(
      compileError(() =>
        base()
          .node('a', noop)
          .entry('a')
          .conditionalEdge('a', () => 'b', ['b'])
          .compile(),
      ),
    ).toBe("Graph 'checked': the conditional edge from 'a' names an unknown node 'b'");
    expect(compileError(() => base().node('a', noop).node('b', noop).entry('a').compile())).toBe(
      "Graph 'checked': node 'b' is unreachable from the entry 'a'",
    );
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
