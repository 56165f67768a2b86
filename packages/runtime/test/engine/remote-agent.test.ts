import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { App, defineAgent, remoteAgent, type ServerHandle } from '../../src/index.js';
import { Relay } from '../support/relay-orchestrator.js';
import { settlesBefore } from '../support/settles-before.js';

describe('remoteAgent', () => {
  let remote: ServerHandle;
  let remoteApp: App;

  beforeAll(async () => {
    const counter = defineAgent({
      name: 'counter',
      description: 'Counts the turns of its session',
      run: (message, { conversation }) =>
        `${message} (turn ${conversation.messages.filter((m) => m.role === 'user').length})`,
    });
    remoteApp = new App({ name: 'remote', agents: [counter], logLevel: 'silent' });
    remote = await remoteApp.start(Relay, { port: 0 });
  });
  afterAll(() => remote.close());

  // Error details on: these tests read what the remote agent says went wrong.
  const front = (agent: ReturnType<typeof remoteAgent>) =>
    new App({
      name: 'front',
      agents: [agent],
      agentTimeoutMs: 500,
      exposeErrorDetails: true,
      logger: () => {},
    }).mount(Relay);

  it("calls another Switchboard server's chat endpoint and keeps one remote session per local session", async () => {
    const app = front(remoteAgent({ name: 'far', description: 'A remote counter', url: remote.url }));
    const first = await app.chat({ sessionId: 'local-1', message: 'hello' });
    expect(first.reply).toBe('ok: ok: hello (turn 1)');
    const second = await app.chat({ sessionId: 'local-1', message: 'again' });
    expect(second.reply).toBe('ok: ok: again (turn 2)');
    const other = await app.chat({ sessionId: 'local-2', message: 'fresh' });
    expect(other.reply).toBe('ok: ok: fresh (turn 1)');
    expect(await remoteApp.sessions.exists('local-1.far')).toBe(true);
    await app.close();
  });

  it('turns an unreachable remote, a 4xx answer and a timeout into error tool messages', async () => {
    const down = front(
      remoteAgent({ name: 'down', description: 'Nobody listens', url: 'http://127.0.0.1:9' }),
    );
    expect((await down.chat({ message: 'hi' })).reply).toMatch(
      /^error: Agent 'down' failed: could not reach/,
    );

    const picky = front(
      remoteAgent({ name: 'picky', description: 'Rejects', url: `${remote.url}/v1/nowhere` }),
    );
    expect((await picky.chat({ message: 'hi' })).reply).toMatch(
      /^error: Agent 'picky' failed: .* answered 404/,
    );

    let answeredLate = () => {};
    const lateAnswer = new Promise<void>((resolve) => {
      answeredLate = resolve;
    });
    const slowServer = await new App({
      name: 'slow',
      agents: [
        defineAgent({
          name: 'sleepy',
          description: 'Sleeps',
          run: () =>
            new Promise((r) =>
              setTimeout(() => {
                r('late');
                answeredLate();
              }, 2_000),
            ),
        }),
      ],
      logLevel: 'silent',
    }).start(Relay, { port: 0 });
    try {
      const slow = front(remoteAgent({ name: 'slow', description: 'Too slow', url: slowServer.url }));
      // Cut off by the 500 ms timeout, not left waiting for the remote's late answer.
      const reply = await settlesBefore(
        slow.chat({ message: 'hi' }),
        lateAnswer,
        "the remote's answer, 2 s late",
      );
      expect(reply.reply).toMatch(/^error: Agent 'slow' failed: timed out after 500 ms/);
    } finally {
      await slowServer.close();
    }
  });
});
