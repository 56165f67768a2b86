/**
 * `pnpm check:imports`: how modules may import each other (STYLE.md, "Imports flow one way").
 * Type-only imports count: a circle of types is still a circle.
 *
 * @type {import('dependency-cruiser').IConfiguration}
 */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import circles: move what both sides need into a module of its own that imports neither.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'adapters-not-server',
      severity: 'error',
      comment:
        'The A2A and MCP adapters and the protocol-neutral backend never import the HTTP server: its routes mount them. What they share lives in backend/.',
      from: { path: '^packages/runtime/src/(a2a|mcp|backend)/' },
      to: { path: '^packages/runtime/src/server/' },
    },
    {
      name: 'agent-contract-imports-nothing-back',
      severity: 'error',
      comment:
        'The agent contract is types only and depends on nothing but the protocol, zod, the pause types and turn records.',
      from: { path: '^packages/runtime/src/agents/agent-contract\\.ts$' },
      to: {
        path: '^packages/runtime/src/',
        pathNot: '^packages/runtime/src/(agents/agent-pause|turns/turn-record)\\.ts$',
      },
    },
    {
      name: 'agent-contract-types-only',
      severity: 'error',
      comment: 'The agent contract imports types only (`import type`), so that loading it runs nothing.',
      from: { path: '^packages/runtime/src/agents/agent-contract\\.ts$' },
      to: { dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'resolvable',
      severity: 'error',
      comment: 'A relative import that does not resolve would drop its edge from every check above.',
      from: {},
      to: { couldNotResolve: true, path: '^\\.' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports are edges too.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Workspace packages resolve through their `exports` (`@switchboard/runtime/a2a` → src/a2a.ts), as TypeScript does.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['types', 'import', 'default'],
      mainFields: ['types', 'module', 'main'],
    },
  },
};
