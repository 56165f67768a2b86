import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { App, defineAgent, remoteAgent, type ServerHandle } from '../../src/index.js';
import { SessionIdSchema } from '../../src/server/schemas.js';
import { Relay } from '../support/relay-orchestrator.js';

const front = (agent: ReturnType<typeof remoteAgent>) =>
  new App({ name: 'front', agents: [agent], agentTimeoutMs: 2_000, logger: () => {} }).mount(Relay);

interface RecordedRequest {
  method: string | undefined;
  path: string | undefined;
  headers: IncomingHttpHeaders;
  body: { message: string; sessionId?: string; userId?: string };
}

/** A plain HTTP server that records each request and answers like Switchboard's `POST /v1/chat`. */
async function startRecordingServer(): Promise<{ url: string; requests: RecordedRequest[]; server: Server }> {
  const requests: RecordedRequest[] = [];
  const server = createServer((request, response) => {
    let raw = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      raw += chunk;
    });
    request.on('end', () => {
      const body = JSON.parse(raw) as RecordedRequest['body'];
      requests.push({ method: request.method, path: request.url, headers: request.headers, body });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          sessionId: body.sessionId ?? 'remote-session',
          turnId: `turn-${requests.length}`,
          reply: `remote got: ${body.message}`,
          status: 'completed',
          steps: [],
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests, server };
}

describe('remoteAgent headers', () => {
  let remote: Awaited<ReturnType<typeof startRecordingServer>>;
  let app: App | undefined;
  beforeAll(async () => {
    remote = await startRecordingServer();
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
    remote.requests.length = 0;
  });
  afterAll(() => new Promise<void>((resolve) => remote.server.close(() => resolve())));

  it('sends the configured headers with every request to the remote chat endpoint', async () => {
    app = front(
      remoteAgent({
        name: 'billing',
        description: 'Invoices, behind an API gateway',
        url: remote.url,
        headers: { authorization: 'Bearer s3cret-token', 'x-tenant': 'acme' },
      }),
    );
    const first = await app.chat({ sessionId: 'with-headers', message: 'refund order 42', userId: 'ada' });
    const second = await app.chat({ sessionId: 'with-headers', message: 'and order 43' });
    expect(first.reply).toBe('ok: remote got: refund order 42');
    expect(second.reply).toBe('ok: remote got: and order 43');

    expect(remote.requests).toHaveLength(2);
    for (const request of remote.requests) {
      expect(request.method).toBe('POST');
      expect(request.path).toBe('/v1/chat');
      expect(request.headers).toMatchObject({
        authorization: 'Bearer s3cret-token',
        'x-tenant': 'acme',
        'content-type': 'application/json',
      });
    }
    expect(remote.requests.map((request) => request.body.message)).toEqual([
      'refund order 42',
      'and order 43',
    ]);
    expect(remote.requests[0]!.body.userId).toBe('ada');
  });

  it('sends no such header when none is configured', async () => {
    app = front(remoteAgent({ name: 'open', description: 'No credentials needed', url: remote.url }));
    expect((await app.chat({ message: 'hello' })).reply).toBe('ok: remote got: hello');
    expect(remote.requests).toHaveLength(1);
    expect(remote.requests[0]!.headers).not.toHaveProperty('authorization');
    expect(remote.requests[0]!.headers).not.toHaveProperty('x-tenant');
  });
});

describe('remoteAgent with long local session ids', () => {
  let remote: ServerHandle;
  /** The session id the remote saw for each message. */
  const remoteSessionOf = new Map<string, string>();

  beforeAll(async () => {
    const counter = defineAgent({
      name: 'counter',
      description: 'Counts the turns of its session',
      run: (message, { conversation }) => {
        remoteSessionOf.set(message, conversation.sessionId);
        return `${message} (turn ${conversation.messages.filter((m) => m.role === 'user').length})`;
      },
    });
    remote = await new App({ name: 'remote', agents: [counter], logger: () => {} }).start(Relay, { port: 0 });
  });
  afterAll(() => remote.close());

  // `<local id>.far` is longer than a session id may be (128), so remoteAgent has to shorten it somehow.
  const tail = (length: number) => 'x'.repeat(length);
  const cases: Array<[string, string, string]> = [
    // The longest ids a client may send over HTTP, different only in their first two characters.
    ['128-character ids that differ only in their first characters', `a1${tail(126)}`, `b2${tail(126)}`],
    // Longer ids reach the agent through app.chat(), which does not limit them.
    [
      '200-character ids that share their last 190 characters',
      `alpha-0001${tail(190)}`,
      `bravo-0002${tail(190)}`,
    ],
    [
      '200-character ids that share their first 190 characters',
      `${tail(190)}alpha-0001`,
      `${tail(190)}bravo-0002`,
    ],
  ];

  let caseNumber = 0;
  it.each(cases)('keeps two local sessions with %s in two remote sessions', async (_how, first, second) => {
    expect(first).not.toBe(second);
    expect(first.length).toBe(second.length);
    expect(`${first}.far`.length).toBeGreaterThan(128);
    const app = front(remoteAgent({ name: 'far', description: 'A remote counter', url: remote.url }));
    try {
      const tag = `case-${++caseNumber}`;
      expect((await app.chat({ sessionId: first, message: `${tag} one` })).reply).toBe(
        `ok: ok: ${tag} one (turn 1)`,
      );
      // A different local conversation: a fresh remote conversation, not turn 2 of the first one.
      expect((await app.chat({ sessionId: second, message: `${tag} two` })).reply).toBe(
        `ok: ok: ${tag} two (turn 1)`,
      );
      // The first conversation continues where it was on the remote.
      expect((await app.chat({ sessionId: first, message: `${tag} three` })).reply).toBe(
        `ok: ok: ${tag} three (turn 2)`,
      );

      const [one, two, three] = [`${tag} one`, `${tag} two`, `${tag} three`].map((message) =>
        remoteSessionOf.get(message),
      );
      expect(one).not.toBe(two);
      expect(three).toBe(one);
      // Both are valid session ids for the remote (it answered 200, or the reply would be an error).
      for (const id of [one, two]) expect(SessionIdSchema.safeParse(id).success, id).toBe(true);
    } finally {
      await app.close();
    }
  });
});
