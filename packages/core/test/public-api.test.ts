import { readFileSync } from 'node:fs';
import * as core from '@switchboard/core';
import { describe, expect, it } from 'vitest';

/**
 * The names api/core.index.api.md (the API report, `pnpm api:update`) lists, as values or as types only.
 * The report is read from the sources; here the module as Node loads it must agree with it.
 */
function reportedExports(): { values: string[]; types: string[] } {
  const report = readFileSync(new URL('../../../api/core.index.api.md', import.meta.url), 'utf8');
  const values: string[] = [];
  const types: string[] = [];
  for (const [, name, notes] of report.matchAll(/^(\w+)\s+[\w +]+ \(([^)]*)\)$/gm)) {
    (notes!.startsWith('type only') ? types : values).push(name!);
  }
  return { values: values.sort(), types: types.sort() };
}

const { values: RUNTIME_EXPORTS, types: DOCUMENTED_TYPE_NAMES } = reportedExports();

/** Module-private helpers that must never become part of the API. */
const INTERNALS = [
  'validateAgents',
  'checkCall',
  'isAllowed',
  'invalid',
  'MARKER',
  'STORAGE_KEY',
  'storage',
  'holder',
  'metadata',
  // Shared with the runtime through `@switchboard/core/internal`, not for applications.
  'agentMetaOf',
  'describeError',
  'traceContextSlot',
  'validateDecision',
];

// Internal types stay internal: each line fails the type check if the name becomes an export.
// @ts-expect-error `Holder` is private to context.ts
export type NoHolder = import('@switchboard/core').Holder;
// @ts-expect-error `validateAgents` is private to orchestrator.ts
export type NoValidateAgents = typeof import('@switchboard/core').validateAgents;
// @ts-expect-error `MARKER` is private to errors/switchboard-error.ts
export type NoMarker = typeof import('@switchboard/core').MARKER;

describe('@switchboard/core public API', () => {
  it('exports at run time exactly the values the API report lists', () => {
    expect(RUNTIME_EXPORTS.length).toBeGreaterThan(40);
    expect(Object.keys(core).sort()).toEqual(RUNTIME_EXPORTS);
  });

  it('does not export internal helpers or markers', () => {
    const exported = new Set(Object.keys(core));
    expect(INTERNALS.filter((name) => exported.has(name))).toEqual([]);
    expect(Object.getOwnPropertySymbols(core).map(String)).toEqual(['Symbol(Symbol.toStringTag)']);
  });

  it('exports types as types only: they leave no runtime value behind', () => {
    expect(DOCUMENTED_TYPE_NAMES.length).toBeGreaterThan(20);
    expect(DOCUMENTED_TYPE_NAMES.filter((name) => name in core)).toEqual([]);
  });

  it('offers no deep imports into its source files', async () => {
    const deepPath = '@switchboard/core/src/orchestrator.ts';
    await expect(import(/* @vite-ignore */ deepPath)).rejects.toThrow(/not exported/);
  });

  it('exports error classes that all share the Switchboard base', () => {
    const errorClasses = Object.entries(core)
      .filter(([name]) => /^[A-Z]\w*Error$/.test(name))
      .map(([, value]) => value);
    expect(errorClasses).toHaveLength(30);
    const notErrors = errorClasses.filter(
      (errorClass) =>
        errorClass !== core.SwitchboardError &&
        !((errorClass as { prototype: unknown }).prototype instanceof core.SwitchboardError),
    );
    expect(notErrors).toEqual([]);
  });
});
