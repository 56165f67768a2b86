// Most of each test is a process compiling and starting, so the tests run side by side (`it.concurrent`, both
// cores busy), and those that only need a running server share one (7 processes, was 9). Measured alone on a
// 2-core machine under a benchmark's load, 3 runs each: 8.5-9.5 s one after another, 5.9-7.1 s now, about
// 11% less CPU time.
import { createScriptedModelServer } from '@switchboard/runtime/testing';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { chat } from './support/server-process.js';
import { type SpawnedServer, serverForTest, spawnServer } from './support/spawn-server.js';

describe('apps/server as a process', () => {
  // Shared by the quick start's curl and the port-in-use test, stopped by the SIGTERM test, which runs after them.
  let server: SpawnedServer;
  beforeAll(() => {
    server = spawnServer({ ORCHESTRATOR: 'keyword' });
  });
  afterAll(() => server.kill());

  it.concurrent('starts with no keys and no Redis, says what it uses, and answers the quick start curl', async ({
    expect,
  }) => {
    const url = await server.listening;
    expect(server.output().stdout).toContain('store in-memory');
    const { status, body } = await chat(url, 'what is 2 + 3 * 4?');
    expect(status).toBe(200);
    expect(body.reply).toContain('14');
    expect((await chat(url, 'convert 5 km to miles')).body.reply).toMatch(/3\.1\d* miles/);
    // The background turns guide's curls: 202 at once, then the turn's status, then its events.
    const queued = await fetch(`${url}/v1/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'convert 5 km to miles', background: true }),
    });
    expect(queued.status).toBe(202);
    const receipt = (await queued.json()) as { sessionId: string; turnId: string; events: string };
    const turnUrl = `${url}/v1/sessions/${receipt.sessionId}/turns/${receipt.turnId}`;
    let turn = { status: 'queued', reply: '' };
    for (
      let attempt = 0;
      attempt < 200 && (turn.status === 'queued' || turn.status === 'running');
      attempt += 1
    ) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      turn = (await (await fetch(turnUrl)).json()) as typeof turn;
    }
    expect(turn.status).toBe('completed');
    expect(turn.reply).toMatch(/3\.1\d* miles/);
    expect(await (await fetch(`${turnUrl}/events`)).text()).toContain('event: turn-end');
  });

  it.concurrent('refuses ORCHESTRATOR=llm without OPENAI_API_KEY at start-up with a clear message', async (context) => {
    const refused = serverForTest(context, { ORCHESTRATOR: 'llm', OPENAI_API_KEY: '' });
    context.expect(await refused.exited).toBe(1);
    context.expect(refused.output().stderr).toContain('ORCHESTRATOR=llm needs OPENAI_API_KEY');
  });

  it.concurrent('routes with ORCHESTRATOR=llm through an OpenAI-compatible endpoint and adds the LLM assistant', async (context) => {
    const { expect } = context;
    const route = (agent: string, message: string) =>
      JSON.stringify({ thought: 'routing', agent, message, reason: `${agent} fits` });
    const model = await createScriptedModelServer({
      script: [route('calculator', '6 * 7'), route('route_to_user', 'The answer is 42.')],
    });
    try {
      const routed = serverForTest(context, {
        ORCHESTRATOR: 'llm',
        OPENAI_API_KEY: 'test-key',
        OPENAI_BASE_URL: model.url,
        OPENAI_MODEL: 'router-model',
      });
      const url = await routed.listening;
      expect(routed.output().stdout).toContain('orchestrator llm');
      expect(routed.output().stdout).toContain('assistant');
      const { status, body } = await chat(url, 'what is six times seven?');
      expect(status).toBe(200);
      expect(body.reply).toBe('The answer is 42.');
      expect(model.requests).toHaveLength(2);
      expect(model.requests[0]?.body.model).toBe('router-model');
      // The agent really ran: its reply is what the router saw on the second call.
      expect(JSON.stringify(model.requests[1]?.body.messages)).toContain('6 * 7 = 42');
    } finally {
      await model.close();
    }
  });

  it.concurrent('refuses an unknown ORCHESTRATOR with the allowed values', async (context) => {
    const refused = serverForTest(context, { ORCHESTRATOR: 'magic' });
    context.expect(await refused.exited).toBe(1);
    context.expect(refused.output().stderr).toContain('keyword, round-robin, task, llm');
  });

  /** The line a failed start-up ended with: its only `switchboard:` line, last, with no stack trace. */
  async function failedStart(context: TestContext, env: Record<string, string>): Promise<string> {
    const { expect } = context;
    const failed = serverForTest(context, env);
    expect(await failed.exited).toBe(1);
    const { stderr } = failed.output();
    const lines = stderr.trimEnd().split('\n');
    expect(
      lines.filter((line) => line.startsWith('switchboard: ')),
      stderr,
    ).toHaveLength(1);
    expect(stderr).not.toMatch(/^\s+at /m);
    return lines.at(-1) as string;
  }

  it.concurrent('says in one line, and exits 1, when its port is in use', async (context) => {
    const { port } = new URL(await server.listening);
    context
      .expect(await failedStart(context, { PORT: port }))
      .toBe(`switchboard: port ${port} on 127.0.0.1 is already in use`);
  });

  it.concurrent('says in one line, and exits 1, when only one of the Langfuse keys is set', async (context) => {
    context
      .expect(await failedStart(context, { LANGFUSE_PUBLIC_KEY: 'pk-lf-only' }))
      .toBe(
        'switchboard: Langfuse tracing needs both LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY; LANGFUSE_SECRET_KEY is missing',
      );
  });

  it.concurrent('says in one line, and exits 1, when LANGFUSE_SAMPLE_RATE is not a rate', async (context) => {
    context
      .expect(
        await failedStart(context, {
          LANGFUSE_PUBLIC_KEY: 'pk-lf-rate',
          LANGFUSE_SECRET_KEY: 'sk-lf-rate',
          LANGFUSE_SAMPLE_RATE: 'half',
        }),
      )
      .toBe(
        "switchboard: Tracing sample rate 'half' is not valid: use a number from 0 to 1 (LANGFUSE_SAMPLE_RATE or sampleRate)",
      );
  });

  it.concurrent('lists every configuration problem on one line', async (context) => {
    context
      .expect(await failedStart(context, { ORCHESTRATOR: 'magic', PORT: 'eighty' }))
      .toMatch(
        /^switchboard: invalid configuration: PORT: .+; ORCHESTRATOR: ORCHESTRATOR must be one of keyword, round-robin, task, llm, supervisor, plan, meta$/,
      );
  });

  // Not concurrent: it runs after the tests above, which use the shared server.
  it('finishes running turns and exits 0 on SIGTERM', async () => {
    await server.listening;
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });
});
