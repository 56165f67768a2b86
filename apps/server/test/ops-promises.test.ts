// A promise of the deploying guide to operators, checked on the real server process: SHUTDOWN_GRACE_MS bounds how long a
// SIGTERM waits for running turns, then aborts them; stores and the last spans get 5 s more, then it exits 1.
import { createServer, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, type TestContext } from 'vitest';
import { serverForTest } from './support/spawn-server.js';
import { streamTurn } from './support/stream-turn.js';

/** Every demo agent waits this long (the longest the server allows): the turn outlives any grace period. */
const NEVER_MS = '600000';
/** The environment of every server here: agents that outlive the grace, and no console (it needs a build). */
const SLOW = { DEMO_AGENT_DELAY_MS: NEVER_MS, SHUTDOWN_GRACE_MS: '300', CONSOLE: 'off' };

/** A JSON turn (`POST /v1/chat`): its status and body text. */
async function jsonTurn(url: string, message: string) {
  const response = await fetch(`${url}/v1/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ message }),
  });
  return { status: response.status, text: await response.text() };
}

/** Where the server's files live: no answer may name them. */
const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** What no answer to a client may contain: a stack trace, a file path of the server, a log record's host fields. */
function expectNothingInternal(text: string) {
  expect(text).not.toMatch(/\n\s+at |\\n\s+at /);
  expect(text).not.toContain(REPO_ROOT);
  expect(text).not.toMatch(/node_modules|\.ts:\d+/);
  expect(text).not.toContain('AbortError');
  expect(text).not.toMatch(/"(hostname|pid)"/);
}

/** A loopback TCP endpoint that accepts connections and never answers: an OTLP collector that hangs. */
async function silentCollector(context: TestContext): Promise<string> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  context.onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  const address = server.address() as { port: number };
  return `http://127.0.0.1:${address.port}`;
}

/** The apology the keyword orchestrator gives for an agent that was aborted (no detail of why). */
const APOLOGY =
  /^Sorry, the (calculator|converter) agent ran into a problem and could not answer\. Please try again in a moment\.$/;

// Side by side: each test is mostly a process starting (tsx) and waiting for its signal to take effect.
describe.concurrent('SHUTDOWN_GRACE_MS on SIGTERM', () => {
  it('aborts turns that outlive the grace: their clients get an answer, then the process exits 0', async (context) => {
    const server = serverForTest(context, SLOW);
    const url = await server.listening;
    const streamed = streamTurn(url, 'what is 2 + 3 * 4?');
    const plain = jsonTurn(url, 'convert 5 km to miles');
    await streamed.running;
    server.child.kill('SIGTERM');

    // The streamed turn: its agent was aborted, it still ends with a message and the last event of the dialog.
    const events = await streamed.events;
    expect(events.find(({ event }) => event === 'agent-end')?.data).toMatchObject({
      agent: 'calculator',
      status: 'error',
      content: "Agent 'calculator' was stopped: the server shut down (agent_stopped)",
    });
    expect(events.find(({ event }) => event === 'message')?.data.content).toMatch(APOLOGY);
    expect(events.at(-1)).toMatchObject({ event: 'turn-end', data: { endOfDialog: true } });
    expectNothingInternal(JSON.stringify(events));
    // The JSON turn: a 200 with the same kind of answer, not a dropped connection.
    const answer = await plain;
    expect(answer.status).toBe(200);
    expect((JSON.parse(answer.text) as { reply: string }).reply).toMatch(APOLOGY);
    expectNothingInternal(answer.text);

    // Nothing held the close up: it exits by itself, cleanly (deploying guide: exit 1 only after the 5 s more).
    expect(await server.exited).toBe(0);
    const { stdout, stderr } = server.output();
    expect(stdout).toContain('SIGTERM received: finishing running turns…');
    expect(stdout).not.toContain('did not close');
    expect(stderr).toBe('');
  });

  it('exits 1, saying so, when the last spans cannot be exported within the 5 s after the grace', async (context) => {
    const collector = await silentCollector(context);
    // OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, since serverEnv sets it empty, which hides OTEL_EXPORTER_OTLP_ENDPOINT.
    const server = serverForTest(context, {
      ...SLOW,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector}/v1/traces`,
    });
    const url = await server.listening;
    expect(server.output().stdout).toContain('Tracing to otlp');
    const streamed = streamTurn(url, 'what is 2 + 3 * 4?');
    await streamed.running;
    server.child.kill('SIGTERM');

    // The turn was aborted after the grace and answered, before the span export hung the close.
    const events = await streamed.events;
    expect(events.find(({ event }) => event === 'message')?.data.content).toMatch(APOLOGY);
    expect(events.at(-1)).toMatchObject({ event: 'turn-end', data: { endOfDialog: true } });

    expect(await server.exited).toBe(1);
    const lines = server
      .output()
      .stdout.trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { level: number; msg: string });
    expect(lines.at(-1)).toEqual(
      expect.objectContaining({ level: 50, msg: 'the server did not close within 5300 ms: exiting' }),
    );
  });
});
