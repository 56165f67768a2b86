import { createScriptedModelServer } from '@switchboard/runtime/testing';
import { describe, expect, it } from 'vitest';
import { chat, startServer } from './support/server-process.js';

describe('apps/server as a process', () => {
  it('starts with no keys and no Redis, says what it uses, and answers the README curl', async () => {
    const server = startServer({ ORCHESTRATOR: 'keyword' });
    const url = await server.listening;
    expect(server.output().stdout).toContain('store in-memory');
    const { status, body } = await chat(url, 'what is 2 + 3 * 4?');
    expect(status).toBe(200);
    expect(body.reply).toContain('14');
    expect((await chat(url, 'convert 5 km to miles')).body.reply).toMatch(/3\.1\d* miles/);
  });

  it('finishes running turns and exits 0 on SIGTERM', async () => {
    const server = startServer({});
    await server.listening;
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });

  it('refuses ORCHESTRATOR=llm without OPENAI_API_KEY at start-up with a clear message', async () => {
    const server = startServer({ ORCHESTRATOR: 'llm', OPENAI_API_KEY: '' });
    expect(await server.exited).toBe(1);
    expect(server.output().stderr).toContain('ORCHESTRATOR=llm needs OPENAI_API_KEY');
  });

  it('routes with ORCHESTRATOR=llm through an OpenAI-compatible endpoint and adds the LLM assistant', async () => {
    const route = (agent: string, message: string) =>
      JSON.stringify({ thought: 'routing', agent, message, reason: `${agent} fits` });
    const model = await createScriptedModelServer({
      script: [route('calculator', '6 * 7'), route('route_to_user', 'The answer is 42.')],
    });
    try {
      const server = startServer({
        ORCHESTRATOR: 'llm',
        OPENAI_API_KEY: 'test-key',
        OPENAI_BASE_URL: model.url,
        OPENAI_MODEL: 'router-model',
      });
      const url = await server.listening;
      expect(server.output().stdout).toContain('orchestrator llm');
      expect(server.output().stdout).toContain('assistant');
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

  it('refuses an unknown ORCHESTRATOR with the allowed values', async () => {
    const server = startServer({ ORCHESTRATOR: 'magic' });
    expect(await server.exited).toBe(1);
    expect(server.output().stderr).toContain('keyword, round-robin, task, llm');
  });

  /** The line a failed start-up ended with: its only `switchboard:` line, last, with no stack trace. */
  async function failedStart(env: Record<string, string>): Promise<string> {
    const server = startServer(env);
    expect(await server.exited).toBe(1);
    const { stderr } = server.output();
    const lines = stderr.trimEnd().split('\n');
    expect(
      lines.filter((line) => line.startsWith('switchboard: ')),
      stderr,
    ).toHaveLength(1);
    expect(stderr).not.toMatch(/^\s+at /m);
    return lines.at(-1) as string;
  }

  it('says in one line, and exits 1, when its port is in use', async () => {
    const first = startServer({});
    const { port } = new URL(await first.listening);
    expect(await failedStart({ PORT: port })).toBe(
      `switchboard: port ${port} on 127.0.0.1 is already in use`,
    );
  });

  it('says in one line, and exits 1, when only one of the Langfuse keys is set', async () => {
    expect(await failedStart({ LANGFUSE_PUBLIC_KEY: 'pk-lf-only' })).toBe(
      'switchboard: Langfuse tracing needs both LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY; LANGFUSE_SECRET_KEY is missing',
    );
  });

  it('lists every configuration problem on one line', async () => {
    expect(await failedStart({ ORCHESTRATOR: 'magic', PORT: 'eighty' })).toMatch(
      /^switchboard: invalid configuration: PORT: .+; ORCHESTRATOR: ORCHESTRATOR must be one of keyword, round-robin, task, llm, supervisor, plan, meta$/,
    );
  });
});
