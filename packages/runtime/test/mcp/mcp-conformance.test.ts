import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { App, type ServerHandle } from '../../src/index.js';
import { echoAgent } from '../support/app-fixtures.js';
import { ToAssistant } from './mcp-support.js';

const run = promisify(execFile);
const CONFORMANCE = join(
  createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json'),
  '..',
  'dist',
  'index.js',
);

/**
 * The server scenarios of @modelcontextprotocol/conformance 0.1.13 that apply
 * to a server offering tools only (one `chat` tool), statelessly.
 *
 * Not applicable: resources-* and prompts-* (no resources or prompts),
 * completion-complete (no completions), logging-set-level and
 * tools-call-with-logging (no logging capability), tools-call-* (each calls
 * a test tool of the conformance "everything" server by name, e.g.
 * `test_simple_text`, that this server does not have), json-schema-2020-12
 * (checks such a test tool's schema), elicitation-* and sampling (no
 * requests to the client), server-sse-polling (a `test_reconnection` tool),
 * server-sse-multiple-streams (needs a session id: it only warns on a
 * stateless server).
 */
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

describe('MCP conformance (server scenarios for a tools-only server)', () => {
  let server: ServerHandle;
  let workDir: string;
  beforeAll(async () => {
    const app = new App({ name: 'desk', agents: [echoAgent('assistant')], logLevel: 'silent', mcp: true });
    server = await app.start(ToAssistant, { port: 0 });
    // The runner writes its results below its working directory.
    workDir = await mkdtemp(join(tmpdir(), 'mcp-conformance-'));
  });
  afterAll(async () => {
    await server?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it.each(SCENARIOS)('%s passes', async (scenario) => {
    const { stdout } = await run(
      process.execPath,
      [CONFORMANCE, 'server', '--url', `${server.url}/mcp`, '--scenario', scenario],
      { cwd: workDir, timeout: 60_000 },
    );
    expect(stdout).toMatch(/Passed: (\d+)\/\1, 0 failed, 0 warnings/);
  });
});
