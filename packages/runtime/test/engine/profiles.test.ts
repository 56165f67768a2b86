import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  currentUserMessage,
  latestToolResults,
  routeToUser,
  SEED_PROFILE,
  toolCall,
  useProfile,
} from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import { remoteAgent } from '../../src/agents/remote-agent.js';
import type { App } from '../../src/app.js';
import { Profiles } from '../../src/engine/profiles.js';
import {
  createApp,
  echoAgent,
  fanOut,
  hangingAgent,
  loopForever,
  postJson,
  relay,
} from '../support/app-fixtures.js';
import { useSpanRecording } from '../support/span-recording.js';

/** Fails with a retryable error `failures` times, then answers. */
function flaky(failures: number, retryable = true) {
  let runs = 0;
  const agent = defineAgent({
    name: 'flaky',
    description: 'Fails, then answers',
    run: () => {
      runs += 1;
      if (runs <= failures) throw Object.assign(new Error(`upstream 503 (run ${runs})`), { retryable });
      return `answered on run ${runs}`;
    },
  });
  return Object.assign(agent, { runs: () => runs });
}

const quick = { agentRetries: 2, retryBaseDelayMs: 5, retryMaxDelayMs: 20 };

describe('strategy profiles', () => {
  const recording = useSpanRecording();
  let app: App | undefined;
  afterEach(() => app?.close());

  it('retries a retryable failure with backoff, each attempt visible on the agent span', async () => {
    const agent = flaky(2);
    app = createApp({
      agents: [agent],
      handler: relay({ defaultAgent: 'flaky' }),
      profiles: { quick },
      profile: 'quick',
    }).app;
    const result = await app.chat({ message: 'go' });
    expect(result.reply).toBe('answered on run 3');
    expect(agent.runs()).toBe(3);
    const [span] = recording().named('agent flaky');
    expect(span?.attributes['switchboard.agent.attempts']).toBe(3);
    expect(
      span?.events
        .filter((event) => event.name === 'retry')
        .map((event) => event.attributes?.['switchboard.attempt']),
    ).toEqual([1, 2]);
    expect(
      (await app.sessions.read(result.sessionId)).filter((message) => message.role === 'tool'),
    ).toHaveLength(1);
  });

  it('retries a remote agent’s 5xx (remote_unavailable) but not its 4xx (remote_rejected)', async () => {
    const statuses = [503, 200, 404];
    const seen: number[] = [];
    const server = createServer((_request, response) => {
      const status = statuses.shift() ?? 404;
      seen.push(status);
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(status === 200 ? { reply: 'from afar' } : { error: { message: 'no' } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const far = remoteAgent({ name: 'far', description: 'Remote', url: `http://127.0.0.1:${port}` });
      app = createApp({
        agents: [far],
        handler: relay({ defaultAgent: 'far' }),
        profiles: { quick },
        profile: 'quick',
      }).app;
      expect((await app.chat({ message: 'one' })).reply).toBe('from afar');
      expect(seen).toEqual([503, 200]);
      const rejected = await app.chat({ message: 'two' });
      expect(seen).toEqual([503, 200, 404]);
      expect(rejected.reply).toContain('(remote_rejected)');
    } finally {
      server.close();
    }
  });

  it('does not retry an error that is not retryable, nor past the profile’s retries', async () => {
    const stubborn = flaky(5, false);
    app = createApp({
      agents: [stubborn],
      handler: relay({ defaultAgent: 'flaky' }),
      profiles: { quick },
      profile: 'quick',
    }).app;
    await app.chat({ message: 'go' });
    expect(stubborn.runs()).toBe(1);
    await app.close();

    const failing = flaky(5);
    app = createApp({
      agents: [failing],
      handler: relay({ defaultAgent: 'flaky' }),
      profiles: { quick },
      profile: 'quick',
    }).app;
    const result = await app.chat({ message: 'go' });
    expect(failing.runs()).toBe(3);
    expect(result.reply).toMatch(/^Sorry, the flaky agent failed/);
  });

  it('ends a slow turn at the profile’s deadline with the best result it had', async () => {
    const created = createApp({
      agents: [echoAgent(), hangingAgent('stuck', 60_000)],
      handler: (conversation) => {
        const results = latestToolResults(conversation);
        if (results.length === 0) return toolCall('echo', currentUserMessage(conversation).content);
        return toolCall('stuck', 'and now wait');
      },
      profiles: { brisk: { turnTimeoutMs: 200 } },
      profile: 'brisk',
    });
    app = created.app;
    const result = await app.chat({ message: 'the forecast' });
    expect(result.status).toBe('limited');
    expect(result.error?.code).toBe('turn_deadline_exceeded');
    expect(result.reply).toBe(
      'I ran out of time after 200 ms, so this may be incomplete. What I have so far:\n\necho: the forecast',
    );
  });

  it('stops at the profile’s hops with the partial result, and the request may pick the profile', async () => {
    app = createApp({ agents: [echoAgent()], handler: loopForever('echo') }).app;
    const result = await app.chat({ message: 'loop', metadata: { profile: 'conservative' } });
    expect(result.status).toBe('limited');
    expect(result.error?.code).toBe('max_hops_exceeded');
    expect(result.steps.filter((step) => step.kind === 'call')).toHaveLength(5);
    expect(result.reply).toBe(
      'I reached the limit of 5 steps, so this may be incomplete. What I have so far:\n\necho: once more',
    );
    const turns = await app.sessions.listTurns(result.sessionId);
    expect(turns[0]).toMatchObject({
      profile: 'conservative',
      status: 'limited',
      error: { code: 'max_hops_exceeded' },
    });
  });

  it('refuses a fan-out under conservative with a clear error, and an unknown profile with a 400', async () => {
    app = createApp({ agents: [echoAgent('a'), echoAgent('b')], handler: fanOut(['a', 'b']) }).app;
    const refused = await app.chat({ message: 'both', metadata: { profile: 'conservative' } });
    expect(refused).toMatchObject({
      status: 'failed',
      reply: 'Sorry, this request needs several agents at once, which is not allowed here.',
      error: { code: 'fan_out_not_allowed' },
    });
    const allowed = await app.chat({ message: 'both', metadata: { profile: 'exploratory' } });
    expect(allowed.status).toBe('completed');

    const response = await app.request(
      '/v1/chat',
      postJson({ sessionId: 'unknown-profile', message: 'hi', metadata: { profile: 'reckless' } }),
    );
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('conservative, exploratory, fallback');
    expect(await app.sessions.exists('unknown-profile')).toBe(false);
  });

  it('does not let a request loosen the app’s default profile, unless the app lists the profile', async () => {
    app = createApp({
      agents: [echoAgent('a'), echoAgent('b')],
      handler: fanOut(['a', 'b']),
      profile: 'conservative',
    }).app;
    const response = await app.request(
      '/v1/chat',
      postJson({ message: 'both', metadata: { profile: 'exploratory' } }),
    );
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('metadata.profile must be one of: conservative');
    await app.close();

    app = createApp({
      agents: [echoAgent('a'), echoAgent('b')],
      handler: fanOut(['a', 'b']),
      profile: 'conservative',
      requestProfiles: ['conservative', 'exploratory'],
    }).app;
    expect((await app.chat({ message: 'both', metadata: { profile: 'exploratory' } })).status).toBe(
      'completed',
    );
  });

  it('lets a router switch the turn’s profile, recorded as a step', async () => {
    app = createApp({
      agents: [echoAgent('a'), echoAgent('b')],
      handler: (conversation) => {
        if (latestToolResults(conversation).length > 0) return routeToUser('done');
        useProfile(conversation, 'conservative');
        return [toolCall('a', 'x'), toolCall('b', 'y')];
      },
    }).app;
    const result = await app.chat({ message: 'risky' });
    expect(result.error?.code).toBe('fan_out_not_allowed');
    expect(result.steps[0]).toMatchObject({
      kind: 'note',
      label: 'profile',
      annotations: { profile: 'conservative' },
    });
  });

  it('gives agents without a timeout of their own the profile’s agentTimeoutMs; the seed profile has 3 retries, 5 s', async () => {
    const seed = new Profiles({ seed: SEED_PROFILE }).get('seed');
    expect(seed).toMatchObject({ agentRetries: 3, agentTimeoutMs: 5_000, maxHops: 10, onLimit: 'partial' });
    expect(() => new Profiles({ bad: { agentTimeoutMs: 0 } })).toThrow(/agentTimeoutMs must be a positive/);

    app = createApp({
      agents: [hangingAgent('stuck')],
      handler: relay({ defaultAgent: 'stuck' }),
      profiles: { brief: { agentTimeoutMs: 50, agentRetries: 0 } },
      profile: 'brief',
    }).app;
    const result = await app.chat({ message: 'wait' });
    const call = result.steps.find((step) => step.kind === 'call');
    expect(call?.calls[0]?.agent).toBe('stuck');
    const stored = await app.sessions.read(result.sessionId);
    expect(stored.find((message) => message.role === 'tool')).toMatchObject({
      status: 'error',
      metadata: { errorCode: 'agent_timeout' },
    });
  });
});
