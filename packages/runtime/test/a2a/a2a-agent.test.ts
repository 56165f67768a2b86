import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { a2aAgent } from '../../src/a2a.js';
import { App } from '../../src/app.js';
import { buildApp, echoAgent } from '../support/app-fixtures.js';
import { Relay } from '../support/relay-orchestrator.js';
import { useSpanRecording } from '../support/span-recording.js';
import { spawnListening } from '../support/spawn-listening.js';

const remoteScript = fileURLToPath(new URL('./fixtures/remote-a2a-app.ts', import.meta.url));

/** Starts the remote A2A app in a process of its own; resolves with its URL once it listens. */
const startRemote = () => spawnListening(remoteScript);

/** A front app routing every message to its only agent (the A2A one), answering `<status>: <reply>`. */
function front(agent: Awaited<ReturnType<typeof a2aAgent>>, agentTimeoutMs = 5_000) {
  return new App({
    name: 'front',
    agents: [agent],
    agentTimeoutMs,
    exposeErrorDetails: true,
    logger: () => {},
  }).mount(Relay);
}

describe('a2aAgent, with the remote in another process', () => {
  const recording = useSpanRecording();
  let remote: { child: ChildProcess; url: string };
  beforeAll(async () => {
    remote = await startRemote();
  });
  afterAll(async () => {
    remote.child.kill('SIGTERM');
    await once(remote.child, 'exit');
  });

  it('takes its name, description and keywords from the agent card', async () => {
    const agent = await a2aAgent({ url: remote.url });
    expect(agent.name).toBe('weather-desk');
    expect(agent.description).toMatch(/routes each message to one of its agents \(forecast\)/);
    expect(agent.keywords).toEqual(['weather', 'forecast']);
    expect(agent.metadata).toEqual({ a2a: `${remote.url}/.well-known/agent-card.json` });
  });

  it('routes a turn to the remote agent, streamed, and traces the call as an agent span under the turn', async () => {
    const app = front(await a2aAgent({ url: remote.url, name: 'weather' }));
    const deltas: string[] = [];
    const result = await app.chat({
      sessionId: 'local-1',
      message: 'Lisbon',
      onEvent: (event) => {
        if (event.type === 'agent-delta') deltas.push(event.delta);
      },
    });
    expect(result.status).toBe('completed');
    expect(result.reply).toMatch(/^ok: ok: sunny in Lisbon \(pid \d+\)$/);
    // Another process answered.
    expect(result.reply).not.toContain(`pid ${process.pid})`);
    expect(deltas.join('')).toMatch(/^ok: sunny in Lisbon/);

    const [agentSpan] = recording().named('agent weather');
    expect(agentSpan?.attributes).toMatchObject({
      'gen_ai.tool.name': 'weather',
      'switchboard.agent.status': 'ok',
      'langfuse.observation.input': '"Lisbon"',
    });
    // The agent call hangs under the routing decision that made it, which hangs under the turn.
    const decision = recording().parentOf(agentSpan!);
    expect(decision?.name).toBe('route 0');
    const turnSpan = recording().parentOf(decision!);
    expect(turnSpan?.name).toBe('front');
    expect(turnSpan?.attributes['session.id']).toBe('local-1');
    expect(agentSpan?.spanContext().traceId).toBe(result.traceId);
    await app.close();
  });

  it('keeps one remote context per local session', async () => {
    const app = front(await a2aAgent({ url: remote.url, name: 'weather' }));
    await app.chat({ sessionId: 'local-2', message: 'Porto' });
    await app.chat({ sessionId: 'local-2', message: 'Faro' });
    expect(recording().named('agent weather')).toHaveLength(2);
    // The remote's session for the local one holds both messages.
    const response = await fetch(`${remote.url}/v1/sessions/local-2.weather`);
    const { messages } = (await response.json()) as { messages: { role: string; content: string }[] };
    expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['Porto', 'Faro']);
    await app.close();
  });
});

describe('a2aAgent with a remote that is down', () => {
  it('refuses to start without a card when the name must come from it', async () => {
    await expect(a2aAgent({ url: 'http://127.0.0.1:9' })).rejects.toThrow(
      /Agent 'http:\/\/127.0.0.1:9\/.well-known\/agent-card.json' failed: could not reach/,
    );
  });

  it('gives the orchestrator a clear agent error, and the turn still answers', async () => {
    const agent = await a2aAgent({
      url: 'http://127.0.0.1:9',
      name: 'gone',
      description: 'A remote that is down',
    });
    const app = front(agent);
    const result = await app.chat({ message: 'anyone there?' });
    expect(result.status).toBe('completed');
    expect(result.reply).toMatch(/^error: Agent 'gone' failed: could not reach http:\/\/127.0.0.1:9\//);
    await app.close();
  });

  it('turns a remote that dies between calls into an agent error', async () => {
    const dying = await startRemote();
    const app = front(await a2aAgent({ url: dying.url, name: 'weather' }));
    expect((await app.chat({ sessionId: 's', message: 'Braga' })).reply).toMatch(/^ok: ok: sunny in Braga/);
    dying.child.kill('SIGTERM');
    await once(dying.child, 'exit');
    const after = await app.chat({ sessionId: 's', message: 'Braga' });
    expect(after.reply).toMatch(/^error: Agent 'weather' failed: could not reach/);
    await app.close();
  });
});

describe('a2aAgent with a remote that does not stream', () => {
  it('sends the message and waits for the task, named after a card name that is not an agent name', async () => {
    const { app: remoteApp, orchestrator } = buildApp({
      agents: [echoAgent()],
      a2a: { card: { name: 'Echo Service' } },
    });
    const served = await remoteApp.start(orchestrator, { port: 0 });
    // The same agent, behind a card that says it does not stream.
    const cardServer = createServer(async (_request, response) => {
      const card = (await (await fetch(`${served.url}/.well-known/agent-card.json`)).json()) as Record<
        string,
        unknown
      >;
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ ...card, capabilities: { streaming: false } }));
    });
    await new Promise<void>((resolve) => cardServer.listen(0, '127.0.0.1', resolve));
    const { port } = cardServer.address() as AddressInfo;
    try {
      const agent = await a2aAgent({ url: `http://127.0.0.1:${port}/card.json` });
      expect(agent.name).toBe('Echo-Service');
      const app = front(agent);
      const deltas: string[] = [];
      const result = await app.chat({
        message: 'ping',
        onEvent: (event) => {
          if (event.type === 'agent-delta') deltas.push(event.delta);
        },
      });
      expect(result.reply).toBe('ok: echo: ping');
      expect(deltas).toEqual([]);
      await app.close();
    } finally {
      cardServer.close();
      await served.close();
    }
  });
});

describe('a2aAgent with a remote that refuses', () => {
  it('names a 5xx as the remote being unavailable and a 4xx with its JSON-RPC reason as a refusal', async () => {
    const { app: remoteApp, orchestrator } = buildApp({ agents: [echoAgent()], a2a: true });
    const served = await remoteApp.start(orchestrator, { port: 0 });
    let answer: { status: number; body: string } = { status: 503, body: 'down for maintenance' };
    // The remote's own card, pointing at this server, whose endpoint answers with `answer`.
    const refusing = createServer(async (request, response) => {
      if (request.method === 'GET') {
        const card = (await (await fetch(`${served.url}/.well-known/agent-card.json`)).json()) as {
          supportedInterfaces: { url: string }[];
        };
        for (const entry of card.supportedInterfaces) entry.url = `http://127.0.0.1:${port}/a2a`;
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify({ ...card, capabilities: { streaming: false } }));
        return;
      }
      request.resume();
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
    });
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    const { port } = refusing.address() as AddressInfo;
    try {
      const app = front(await a2aAgent({ url: `http://127.0.0.1:${port}`, name: 'picky' }));
      const unavailable = await app.chat({ message: 'hello' });
      expect(unavailable.reply).toMatch(
        /^error: Agent 'picky' failed: .*\/a2a answered 503: down for maintenance/,
      );
      answer = {
        status: 401,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'bad key' } }),
      };
      const refused = await app.chat({ message: 'hello' });
      expect(refused.reply).toMatch(/^error: Agent 'picky' failed: .*\/a2a answered 401: bad key$/);
      await app.close();
    } finally {
      refusing.close();
      await served.close();
    }
  });
});
