import {
  AbstractOrchestrator,
  ConfigurationError,
  type Conversation,
  type Decision,
  type OrchestratorOptions,
  ValidationError,
} from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { App } from '../../src/app.js';
import { echoAgent, postJson, relay, ScriptedOrchestrator, streamingAgent } from '../support/app-fixtures.js';

/** An orchestrator class, as a user would pass it to `app.start`. */
class RelayOrchestrator extends AbstractOrchestrator {
  static constructedWith: OrchestratorOptions | undefined;
  readonly #relay = relay();

  constructor(options: OrchestratorOptions) {
    super(options);
    RelayOrchestrator.constructedWith = options;
  }

  protected handleMessage(conversation: Conversation): Decision | Promise<Decision> {
    return this.#relay(conversation);
  }
}

function thrownBy(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

describe('App construction', () => {
  it('refuses two agents with the same name, naming it', () => {
    const error = thrownBy(
      () => new App({ name: 'dupes', agents: [echoAgent('helper'), streamingAgent('helper')] }),
    );
    expect(ConfigurationError.isInstance(error)).toBe(true);
    expect(error.message).toContain("'helper'");
  });

  it('refuses an App without a name', () => {
    expect(ConfigurationError.isInstance(thrownBy(() => new App({ name: '', agents: [] })))).toBe(true);
  });

  it('refuses to mount an orchestrator that knows an agent the app does not host, naming it', () => {
    const app = new App({ name: 'partial', agents: [echoAgent()] });
    const orchestrator = new ScriptedOrchestrator(
      [echoAgent(), { name: 'translator', description: 'Translates' }],
      relay(),
    );
    const error = thrownBy(() => app.mount(orchestrator));
    expect(ConfigurationError.isInstance(error)).toBe(true);
    expect(error.message).toContain('translator');
    expect(error.message).toContain('echo');
  });

  it('start() fails the same way, before listening', async () => {
    const app = new App({ name: 'partial', agents: [echoAgent()] });
    const orchestrator = new ScriptedOrchestrator(
      [{ name: 'translator', description: 'Translates' }],
      relay(),
    );
    await expect(app.start(orchestrator, { port: 0 })).rejects.toThrow(/translator/);
  });

  it("start() with an orchestrator class constructs it with the app's name and agents, and serves", async () => {
    const app = new App({
      name: 'class-app',
      agents: [echoAgent(), streamingAgent('streamer')],
      logLevel: 'silent',
    });
    const server = await app.start(RelayOrchestrator, { port: 0 });
    try {
      expect(RelayOrchestrator.constructedWith?.name).toBe('class-app');
      expect(RelayOrchestrator.constructedWith?.agents.map((agent) => agent.name)).toEqual([
        'echo',
        'streamer',
      ]);
      expect(app.orchestrator).toBeInstanceOf(RelayOrchestrator);
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(server.port).toBeGreaterThan(0);

      const response = await fetch(`${server.url}/v1/chat`, postJson({ message: 'streamer: hi' }));
      expect(((await response.json()) as { reply: string }).reply).toBe('Hello world');
    } finally {
      await server.close();
    }
  });

  it('refuses a second orchestrator and explains that fetch needs one first', () => {
    const app = new App({ name: 'once', agents: [echoAgent()] });
    const unmounted = thrownBy(() => app.request('/healthz'));
    expect(ConfigurationError.isInstance(unmounted)).toBe(true);
    expect(unmounted.message).toMatch(/mount\(\) or start\(\)/);

    app.mount(RelayOrchestrator);
    expect(ConfigurationError.isInstance(thrownBy(() => app.mount(RelayOrchestrator)))).toBe(true);
  });

  it('app.chat() refuses an empty message with a ValidationError and runs a turn otherwise', async () => {
    const app = new App({ name: 'direct', agents: [echoAgent()] }).mount(RelayOrchestrator);
    await expect(app.chat({ message: '' })).rejects.toSatisfy((error) => ValidationError.isInstance(error));
    const result = await app.chat({ message: 'hi', sessionId: 'direct-1' });
    expect(result).toMatchObject({ sessionId: 'direct-1', reply: 'echo: hi', status: 'completed' });
    await app.close();
  });

  it('app.fetch answers a standard Request, so the app can sit inside another server', async () => {
    const app = new App({ name: 'embedded', agents: [echoAgent()], logLevel: 'silent' }).mount(
      RelayOrchestrator,
    );
    const response = await app.fetch(new Request('http://localhost/v1/chat', postJson({ message: 'hi' })));
    expect(response.status).toBe(200);
    expect(((await response.json()) as { reply: string }).reply).toBe('echo: hi');
    expect((await app.fetch(new Request('http://localhost/v1/agents'))).status).toBe(200);
    await app.close();
  });

  it('start() rejects when the port is taken', async () => {
    const first = await new App({ name: 'first', agents: [echoAgent()] }).start(RelayOrchestrator, {
      port: 0,
    });
    try {
      const second = new App({ name: 'second', agents: [echoAgent()] });
      await expect(second.start(RelayOrchestrator, { port: first.port })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await first.close();
    }
  });
});
