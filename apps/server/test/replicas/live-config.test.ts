import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, useRedis } from '../../../../packages/runtime/test/support/redis.js';
import { chat, type Replica, readSession, replyPid, useReplicas } from './support/replicas.js';

const redis = useRedis();
const replicas = useReplicas();

let a: Replica;
let b: Replica;

beforeAll(async () => {
  [a, b] = (await replicas.start(2, { REDIS_URL, KEY_PREFIX: redis.prefix(), ORCHESTRATOR: 'meta' })) as [
    Replica,
    Replica,
  ];
}, 30_000);

/** `PUT /v1/config/task-type/rotate` (or a rollback) on a replica, with how long it took. */
async function change(url: string, path: string, method: string, body: unknown) {
  const response = await fetch(`${url}/v1/config/${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return {
    status: response.status,
    body: (await response.json()) as { version: number; updatedBy?: string },
  };
}

describe('live configuration over two replicas sharing Redis', () => {
  it('routes by a task type added on one replica on the next turn of the other, and a rollback restores it', async () => {
    const sessionId = `config-${randomBytes(4).toString('hex')}`;
    const ask = async () => {
      const outcome = await chat(b.url, { message: 'please rotate', sessionId });
      expect(outcome.status).toBe(200);
      expect(replyPid(outcome.body.reply)).toBe(b.pid);
      return outcome.body.reply ?? '';
    };
    expect(await ask()).toMatch(/^echo: /);

    const timings: number[] = [];
    const changeThenAsk = async (path: string, method: string, body: unknown) => {
      const startedAt = performance.now();
      const changed = await change(a.url, path, method, body);
      expect(changed.status).toBe(200);
      const reply = await ask();
      timings.push(performance.now() - startedAt);
      return { version: changed.body.version, reply };
    };
    const added = await changeThenAsk('task-type/rotate', 'PUT', {
      value: { description: 'Rotations', patterns: ['chat'] },
      comment: 'rotations go to chat for now',
      updatedBy: 'ops',
    });
    expect(added.reply).toMatch(/^echo: /);
    const moved = await changeThenAsk('task-type/rotate', 'PUT', {
      value: { description: 'Rotations', patterns: ['rotation'] },
      expectedVersion: added.version,
    });
    expect(moved.reply).toMatch(/^(alpha|beta|gamma) \(pid/);
    const rolledBack = await changeThenAsk('task-type/rotate/rollback', 'POST', { version: added.version });
    expect(rolledBack.reply).toMatch(/^echo: /);

    // Each turn records the configuration it ran under, and its meta-route note the task type chosen.
    const { turns } = await readSession(b.url, sessionId);
    expect(
      turns.map((turn) => [
        turn.configVersion?.app,
        turn.steps.find((step) => step.label === 'meta-route')?.annotations?.taskType,
      ]),
    ).toEqual([
      [undefined, 'chat'],
      [added.version, 'rotate'],
      [moved.version, 'rotate'],
      [rolledBack.version, 'rotate'],
    ]);
    expect([added.version, moved.version, rolledBack.version]).toEqual([1, 2, 3]);
    console.info(
      `change on one replica → the other's next answer: ${timings.map((ms) => `${Math.round(ms)} ms`).join(', ')}`,
    );
  }, 30_000);
});
