import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as core from '@switchboard/core';
import * as orchestrators from '@switchboard/orchestrators';
import * as runtime from '@switchboard/runtime';
import { describe, expect, it } from 'vitest';
import { type ErrorClass, errorClasses } from '../../../scripts/error-classes.js';
import { checkCodes, errorCodesPage, PAGE, REPOSITORY, SHARED_CODES } from '../../../scripts/error-codes.js';

// Keeps docs/reference/error-codes.md honest: it is what the error classes say, and they say it right.
const classes = errorClasses(REPOSITORY);
const byName = new Map(classes.map((error) => [error.name, error]));

/** The concrete error classes a package's main export holds, by name. */
function exportedErrorClasses(module: Record<string, unknown>): string[] {
  const abstract = new Set(['SwitchboardError', 'UserError', 'SystemError']);
  return Object.entries(module)
    .filter(
      ([name, value]) =>
        typeof value === 'function' &&
        value.prototype instanceof core.SwitchboardError &&
        !abstract.has(name),
    )
    .map(([name]) => name);
}

/** The page's row of one code and class, as its cells. */
function row(code: string, className: string): string[] | undefined {
  const line = errorCodesPage()
    .split('\n')
    .find((text) => text.startsWith(`| \`${code}\` | \`${className}\``));
  return line?.split(' | ').map((cellText) => cellText.replace(/^\| /, '').trim());
}

describe('the error-code reference (docs/reference/error-codes.md)', () => {
  it('is what pnpm docs:errors generates from the error classes', () => {
    expect(readFileSync(join(REPOSITORY, PAGE), 'utf8')).toBe(errorCodesPage());
    // The documented command itself: --check fails when the page is stale.
    const output = execFileSync('pnpm', ['-s', 'docs:errors', '--check'], {
      cwd: REPOSITORY,
      encoding: 'utf8',
    });
    expect(output).toContain('is up to date');
  });

  it('lists every error class the packages export', () => {
    const exported = [core, runtime, orchestrators].flatMap((module) => exportedErrorClasses(module));
    expect(exported.length).toBeGreaterThan(40);
    expect(exported.filter((name) => !byName.has(name))).toEqual([]);
  });

  it('reads code, kind and retryable as the errors have them', () => {
    const instances: core.SwitchboardError[] = [
      new core.ValidationError({ issues: ['message: required'] }),
      new core.CallDepthExceededError({ depth: 3, maxDepth: 2 }),
      new core.AgentStoppedError({ agent: 'weather' }),
      new core.StoreUnavailableError({}),
      new runtime.QueueFullError(10),
      new runtime.ToolTimeoutError({ tool: 'search', timeoutMs: 10 }),
      new runtime.RemoteAgentError({ agent: 'far', code: 'remote_unavailable', message: '503' }),
      new runtime.RemoteAgentError({ agent: 'far', code: 'remote_rejected', message: '400' }),
      new orchestrators.GraphStepLimitError({ graph: 'plan', maxSteps: 3, next: ['review'] }),
    ];
    for (const error of instances) {
      const found = byName.get(error.name) as ErrorClass;
      expect(found.kind, error.name).toBe(error.kind);
      expect(found.codes, error.name).toContain(error.code);
      const cells = row(error.code, error.name);
      expect(cells?.[4], error.name).toBe(error.retryable ? 'yes' : 'no');
    }
    expect(row('session_busy', 'SessionBusyError')?.[3]).toBe('409');
    expect(row('store_unavailable', 'StoreUnavailableError')?.[3]).toBe('503');
    expect(row('agent_error', 'AgentError')?.[4]).toMatch(/^depends: /);
  });

  it('gives every code one class, but for the shared codes it explains', () => {
    expect(() => checkCodes(classes)).not.toThrow();
    const made = (name: string, code: string, codeFrom?: string): ErrorClass => ({
      name,
      file: 'x.ts',
      packageName: '@switchboard/runtime',
      exported: true,
      kind: 'system',
      codes: [code],
      ...(codeFrom ? { codeFrom } : {}),
      retryable: { always: false },
      summary: 'x',
    });
    const shared = Object.keys(SHARED_CODES).flatMap((code) => [
      made(`${code}A`, code),
      made(`${code}B`, code),
    ]);
    // A subclass carrying its parent's code is that error, not a second one.
    expect(() =>
      checkCodes([...shared, made('Parent', 'one'), made('Child', 'one', 'Parent')]),
    ).not.toThrow();
    expect(() => checkCodes([...shared, made('First', 'same'), made('Second', 'same')])).toThrow(
      /'same' is declared by First, Second/,
    );
    expect(() => checkCodes(shared.slice(1))).toThrow(/'blocked' is no longer shared/);
  });
});
