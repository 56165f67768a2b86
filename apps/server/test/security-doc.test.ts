import { readFileSync } from 'node:fs';
import {
  DEFAULT_PUBLIC_ROUTES,
  DEFAULT_TENANT_SCOPES,
  DEFAULT_USER_SCOPES,
  KEY_SCOPES,
} from '@switchboard/runtime';
import { describe, expect, it } from 'vitest';
import { readConfig } from '../src/config.js';

// Keeps docs/guides/security.md honest where a check is cheap: the variables it names, the defaults it states.
const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');
const page = read('docs/guides/security.md');
const configSource = read('apps/server/src/config.ts');

/** The variables apps/server's schema reads: the keys of its `EnvSchema` object. */
const schemaBlock = configSource.slice(configSource.indexOf('const EnvSchema = z.object({'));
const SCHEMA_VARIABLES = new Set(
  [...schemaBlock.slice(0, schemaBlock.indexOf('\n});')).matchAll(/^ {2}([A-Z][A-Z0-9_]*):/gm)].map(
    (match) => match[1] as string,
  ),
);
const defaults = readConfig({}) as unknown as Record<string, unknown>;

/** True when `value` is the configuration default that the page's words `stated` describe. */
function matchesDefault(value: unknown, stated: string): boolean {
  if (/^\d+$/.test(stated)) return value === Number(stated);
  if (stated === 'off' || stated === 'false' || stated === 'none')
    return value === undefined || value === false || (Array.isArray(value) && value.length === 0);
  if (stated === 'on' || stated === 'true') return value === true;
  return value === stated;
}

/** The rows of the table whose header row is `header`, as arrays of trimmed cells. */
function tableRows(header: string): string[][] {
  const start = page.indexOf(header);
  expect(start, `no table headed ${header}`).toBeGreaterThanOrEqual(0);
  const rows: string[][] = [];
  for (const line of page.slice(start).split('\n').slice(2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

describe('docs/guides/security.md', () => {
  it('is linked from the README', () => {
    expect(
      read('README.md').includes('](docs/guides/security.md)'),
      'README links docs/guides/security.md',
    ).toBe(true);
  });

  it('names only variables apps/server reads', () => {
    expect(SCHEMA_VARIABLES.size).toBeGreaterThan(20);
    const named = [...page.matchAll(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)`/g)].map((match) => match[1] as string);
    const variables = named.filter((name) => name.includes('_') || SCHEMA_VARIABLES.has(name));
    expect(variables.length).toBeGreaterThan(10);
    expect(variables.filter((name) => !SCHEMA_VARIABLES.has(name))).toEqual([]);
  });

  it("states each variable's default in the limits table as the schema has it", () => {
    const rows = tableRows('| limit | default | option | variable |').filter((row) => row[3] !== '—');
    expect(rows.length).toBeGreaterThanOrEqual(6);
    for (const [, stated = '', , variable = ''] of rows) {
      const name = variable.replaceAll('`', '');
      expect(matchesDefault(defaults[name], stated), `${name}: page says ${stated}`).toBe(true);
    }
  });

  it('states the defaults it gives in prose ("`VARIABLE`, default …") as the schema has them', () => {
    const stated = [...page.matchAll(/`([A-Z][A-Z0-9_]+)`, default `?(\w+)`?/g)];
    expect(stated.length).toBeGreaterThanOrEqual(3);
    for (const [, name = '', value = ''] of stated) {
      expect(matchesDefault(defaults[name], value), `${name}: page says ${value}`).toBe(true);
    }
  });

  it('lists the public routes, the scopes and the default scopes of the code', () => {
    const publicRow = tableRows('| who | can | cannot |').find((row) => row[0]?.includes('with keys on'));
    for (const route of DEFAULT_PUBLIC_ROUTES) expect(publicRow?.[1]).toContain(`\`${route}\``);
    for (const scope of KEY_SCOPES) expect(page).toContain(`\`${scope}\``);
    const defaultScopes = (role: string) => {
      const match = new RegExp(`\\*\\*${role}\\*\\* \\([^)]*default scopes: ([^)]*)\\)`).exec(page);
      return [...(match?.[1] ?? '').matchAll(/`([^`]+)`/g)].map((scope) => scope[1]);
    };
    expect(defaultScopes('Tenant-wide key')).toEqual([...DEFAULT_TENANT_SCOPES]);
    expect(defaultScopes('User-bound key')).toEqual([...DEFAULT_USER_SCOPES]);
  });
});
