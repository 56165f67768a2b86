import {
  AbstractOrchestrator,
  type Conversation,
  type Decision,
  RequestContext,
  routeToUser,
} from '@switchboard/core';
import { afterAll, describe, expect, it } from 'vitest';
import { App } from '../../src/app.js';
import { createRedisStores } from '../../src/redis.js';
import { echoAgent } from '../support/app-fixtures.js';
import { REDIS_URL, useRedis } from '../support/redis.js';

const redis = useRedis();

/** Answers with the configuration the turn sees: its version and the echo agent's keywords item. */
class ShowConfig extends AbstractOrchestrator {
  protected handleMessage(_conversation: Conversation): Decision {
    const { config } = RequestContext.current();
    return routeToUser(
      JSON.stringify({ version: config.version, echo: config.get('keywords', 'echo') ?? null }),
    );
  }
}

const CHANGES = 5;
const apps: App[] = [];
afterAll(() => Promise.all(apps.map((app) => app.close())));

/** An app of its own Redis connections (as another replica would have), on the shared prefix. */
function replica(keyPrefix: string): App {
  const app = new App({
    name: 'replica',
    agents: [echoAgent()],
    logLevel: 'silent',
    ...createRedisStores(REDIS_URL, { keyPrefix }),
  }).mount(new ShowConfig({ name: 'show', agents: [] }));
  apps.push(app);
  return app;
}

describe('a config change on one app reaches another app on the same Redis', () => {
  it('is taken up by the other replica once per change, in order, before its next turn', async () => {
    const keyPrefix = redis.prefix();
    const [a, b] = [replica(keyPrefix), replica(keyPrefix)];
    // Both caches warm (and subscribed) before the changes.
    for (const app of [a, b]) await app.chat({ message: 'warm up', sessionId: 'warm' });
    await new Promise((resolve) => setTimeout(resolve, 100));

    const applied: Array<{ scope: string; version: number; at: number }> = [];
    let waiting: ((version: number) => void) | undefined;
    b.config.onApplied((scope, version) => {
      applied.push({ scope, version, at: performance.now() });
      waiting?.(version);
    });
    const latencies: number[] = [];
    const answers: unknown[] = [];
    for (let change = 1; change <= CHANGES; change += 1) {
      const taken = new Promise<void>((resolve) => {
        waiting = (version) => {
          if (version === change) resolve();
        };
      });
      const startedAt = performance.now();
      const { version } = await a.config.put(
        'keywords',
        'echo',
        { keywords: [`word${change}`] },
        { updatedBy: 'test' },
      );
      expect(version).toBe(change);
      await taken;
      latencies.push(performance.now() - startedAt);
      answers.push(JSON.parse((await b.chat({ message: `after ${change}`, sessionId: 'reader' })).reply));
    }
    expect(applied.map(({ scope, version }) => `${scope}@${version}`)).toEqual(
      Array.from({ length: CHANGES }, (_, index) => `app@${index + 1}`),
    );
    expect(answers).toEqual(
      Array.from({ length: CHANGES }, (_, index) => ({
        version: { app: index + 1 },
        echo: { keywords: [`word${index + 1}`] },
      })),
    );
    console.info(
      `config change taken up by the other replica after ${latencies.map((ms) => `${ms.toFixed(1)} ms`).join(', ')} (put → applied)`,
    );
  });

  it('sends a tenant’s change to that tenant’s turns only, over the app-wide items', async () => {
    const keyPrefix = redis.prefix();
    const [a, b] = [replica(keyPrefix), replica(keyPrefix)];
    await a.config.put('keywords', 'echo', { keywords: ['everyone'] });
    await a.config.put('keywords', 'echo', { keywords: ['acme only'] }, { tenantId: 'acme' });
    const seen = async (tenantId: string) =>
      JSON.parse((await b.chat({ message: 'which', sessionId: `s-${tenantId}`, tenantId })).reply);
    expect(await seen('acme')).toEqual({ version: { app: 1, tenant: 1 }, echo: { keywords: ['acme only'] } });
    expect(await seen('globex')).toEqual({
      version: { app: 1, tenant: 0 },
      echo: { keywords: ['everyone'] },
    });
  });
});
