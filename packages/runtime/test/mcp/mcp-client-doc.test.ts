import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import { App, type ServerHandle } from '../../src/index.js';
import { ToAssistant } from './mcp-support.js';

// Keeps docs/guides/agents.md honest: its MCP client block runs as written against an app's /mcp endpoint
// (the server's address aside) and prints what its comment shows.
const page = readFileSync(new URL('../../../../docs/guides/agents.md', import.meta.url), 'utf8');
const clientBlock = [...page.matchAll(/```ts\n([\s\S]*?)```/g)]
  .map((match) => match[1]!)
  .find((block) => block.includes('StreamableHTTPClientTransport'));
const SHOWN_URL = 'http://127.0.0.1:3000/mcp';

/** Adds the two numbers of a question such as "what is 2 + 3?". */
const assistant = defineAgent({
  name: 'assistant',
  description: 'Adds two numbers',
  run: (message) => {
    const [, a, b] = /(\d+)\s*\+\s*(\d+)/.exec(message) ?? [];
    return a && b ? String(Number(a) + Number(b)) : 'I can only add two numbers.';
  },
});

const servers: ServerHandle[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** Runs `code` as a module beside this test (so its imports resolve), returning what it logged. */
async function run(code: string): Promise<unknown[]> {
  const file = new URL('./.mcp-client-doc.ts', import.meta.url);
  writeFileSync(file, code);
  const logged: unknown[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...values: unknown[]) => {
    logged.push(...values);
  });
  try {
    await import(/* @vite-ignore */ `${file.href}?run=${Date.now()}`);
  } finally {
    log.mockRestore();
    rmSync(file, { force: true });
  }
  return logged;
}

describe('docs/guides/agents.md: calling an app over MCP', () => {
  it('runs the client block as written and gets the reply its comment shows', async () => {
    expect(clientBlock, 'the MCP client block of docs/guides/agents.md').toBeDefined();
    expect(clientBlock).toContain(SHOWN_URL);
    const app = new App({ name: 'desk', agents: [assistant], logLevel: 'silent', mcp: true });
    const server = await app.start(ToAssistant, { port: 0 });
    servers.push(server);

    const logged = await run(clientBlock!.replace(SHOWN_URL, `${server.url}/mcp`));

    expect(logged).toEqual([
      {
        reply: '5',
        sessionId: expect.stringMatching(/^ses_/),
        turnId: expect.any(String),
        status: 'completed',
      },
    ]);
    expect(clientBlock).toContain("// { reply: '5', sessionId: 'ses_…', turnId: '…', status: 'completed' }");
  });
});
