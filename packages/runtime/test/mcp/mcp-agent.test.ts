import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { App } from '../../src/app.js';
import { mcpAgent, mcpTools } from '../../src/mcp.js';
import { Relay } from '../support/relay-orchestrator.js';
import { STDIO_TOOL_SERVER } from './mcp-support.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function appWith(agent: ReturnType<typeof mcpAgent>) {
  const app = new App({ name: 'desk', agents: [agent], logLevel: 'silent' }).mount(Relay);
  cleanups.push(() => app.close());
  return app;
}

describe('mcpAgent', () => {
  it('calls its MCP tool with the call’s JSON arguments, no model in between', async () => {
    const app = appWith(
      mcpAgent({ name: 'assistant', description: 'Adds numbers', tool: 'add', server: STDIO_TOOL_SERVER }),
    );
    const turn = await app.chat({ message: '{"a": 20, "b": 22}' });
    expect(turn.reply).toBe('ok: The sum is 42\n{"sum":42}');
  });

  it('passes a plain-text message as the tool’s only text argument, and fails the call on an error result', async () => {
    const tools = mcpTools(STDIO_TOOL_SERVER);
    const app = appWith(
      mcpAgent({ name: 'assistant', description: 'Stock levels', tool: 'stock', server: tools }),
    );
    const turn = await app.chat({ message: 'X-9' });
    expect(turn.reply).toMatch(/^error: /);
  });
});

describe('@switchboard/runtime', () => {
  it('does not import the MCP SDK, not even transitively (only @switchboard/runtime/mcp does)', () => {
    const packages = new Set<string>();
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const source = readFileSync(file, 'utf8');
      // Static value imports and re-exports; `import type` is erased, `import()` loads on demand.
      for (const [, specifier] of source.matchAll(/^(?:import|export) (?!type )[^;]*? from '([^']+)';/gms)) {
        if (!specifier) continue;
        if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
        else packages.add(specifier);
      }
    };
    visit(fileURLToPath(new URL('../../src/index.ts', import.meta.url)));
    expect(seen.size).toBeGreaterThan(50);
    expect([...packages].filter((name) => name.startsWith('@modelcontextprotocol'))).toEqual([]);
    expect([...seen].filter((file) => file.includes('/src/mcp'))).toEqual([]);
  });
});
