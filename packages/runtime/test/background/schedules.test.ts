import { describe, expect, it } from 'vitest';
import { apiKeys } from '../../src/index.js';
import { createApp, echoAgent, postJson, sleep } from '../support/app-fixtures.js';

type Schedule = { id: string; every?: number; sessionId?: string };

async function json<T>(response: Response | Promise<Response>): Promise<T> {
  return (await (await response).json()) as T;
}

describe('schedules, in memory', () => {
  it('runs a message on every tick in its session until the schedule is deleted', async () => {
    const { app } = createApp({ agents: [echoAgent()] });
    const created = await app.request(
      '/v1/schedules',
      postJson({ message: 'echo: tick', every: 1000, sessionId: 'ticks' }),
    );
    expect(created.status).toBe(201);
    const schedule = (await created.json()) as Schedule;
    expect(schedule).toMatchObject({ every: 1000, sessionId: 'ticks' });
    const turns = async () =>
      (await json<{ turns: Array<{ status: string }> }>(app.request('/v1/sessions/ticks'))).turns;
    for (
      let attempt = 0;
      attempt < 400 && (await app.request('/v1/sessions/ticks')).status === 404;
      attempt += 1
    )
      await sleep(10);
    for (let attempt = 0; attempt < 400 && (await turns()).length < 2; attempt += 1) await sleep(10);
    expect((await turns()).every((turn) => turn.status === 'completed')).toBe(true);
    expect(
      (await json<{ data: Schedule[] }>(app.request('/v1/schedules'))).data.map((listed) => listed.id),
    ).toEqual([schedule.id]);
    expect((await app.request(`/v1/schedules/${schedule.id}`, { method: 'DELETE' })).status).toBe(204);
    const after = (await turns()).length;
    await sleep(1_300);
    expect((await turns()).length).toBe(after);
    expect((await json<{ data: Schedule[] }>(app.request('/v1/schedules'))).data).toEqual([]);
    await app.close();
  });

  it('refuses bad timings with 400 and a tenant past its bound with 429, storing nothing', async () => {
    const { app } = createApp({ agents: [echoAgent()], background: { schedules: { maxPerTenant: 1 } } });
    const bad: Array<[unknown, string]> = [
      [{ message: 'x', every: 1000, cron: '* * * * *' }, 'exactly one'],
      [{ message: 'x' }, 'exactly one'],
      [{ message: 'x', every: 10 }, 'every'],
      [{ message: 'x', cron: 'every day' }, 'cron'],
      [{ message: 'x', cron: '0 9 * * *', timezone: 'Mars/Olympus' }, 'timezone'],
      [{ message: 'x', every: 1000, timezone: 'Europe/Paris' }, 'timezone'],
    ];
    for (const [body, says] of bad) {
      const response = await app.request('/v1/schedules', postJson(body));
      expect(response.status).toBe(400);
      expect(JSON.stringify(await response.json())).toContain(says);
    }
    expect(
      (
        await app.request(
          '/v1/schedules',
          postJson({ message: 'x', cron: '0 9 * * 1-5', timezone: 'Europe/Paris' }),
        )
      ).status,
    ).toBe(201);
    const full = await app.request('/v1/schedules', postJson({ message: 'y', every: 60_000 }));
    expect(full.status).toBe(429);
    expect((await json<{ data: Schedule[] }>(app.request('/v1/schedules'))).data).toHaveLength(1);
    await app.close();
  });

  it("keeps each tenant's schedules to itself", async () => {
    const auth = apiKeys({
      keys: {
        'sk-one-0123456789abcdef': { name: 'one', tenantId: 't1' },
        'sk-two-0123456789abcdef': { name: 'two', tenantId: 't2' },
      },
    });
    const { app } = createApp({ agents: [echoAgent()], auth });
    const one = { authorization: 'Bearer sk-one-0123456789abcdef' };
    const two = { authorization: 'Bearer sk-two-0123456789abcdef' };
    const schedule = await json<Schedule>(
      app.request('/v1/schedules', postJson({ message: 'echo: x', every: 60_000 }, one)),
    );
    expect((await json<{ data: Schedule[] }>(app.request('/v1/schedules', { headers: two }))).data).toEqual(
      [],
    );
    expect(
      (await app.request(`/v1/schedules/${schedule.id}`, { method: 'DELETE', headers: two })).status,
    ).toBe(404);
    expect(
      (await app.request(`/v1/schedules/${schedule.id}`, { method: 'DELETE', headers: one })).status,
    ).toBe(204);
    await app.close();
  });

  it('are listed and deleted in code with the tenant and user as options', async () => {
    const { app } = createApp({ agents: [echoAgent()] });
    const schedules = app.schedules;
    if (!schedules) throw new Error('the app has schedules');
    const mine = await schedules.create({ message: 'echo: x', every: 60_000, tenantId: 't1', userId: 'ann' });
    expect((await schedules.list({ tenantId: 't1' })).map((listed) => listed.id)).toEqual([mine.id]);
    expect(await schedules.list({ tenantId: 't1', userId: 'bob' })).toEqual([]);
    expect(await schedules.list()).toEqual([]);
    expect(await schedules.delete(mine.id, { tenantId: 't2' })).toBe(false);
    expect(await schedules.delete(mine.id, { tenantId: 't1', userId: 'bob' })).toBe(false);
    // The deprecated positional form answers the same until the next minor.
    expect((await schedules.list('t1', 'ann')).map((listed) => listed.id)).toEqual([mine.id]);
    expect(await schedules.delete(mine.id, { tenantId: 't1', userId: 'ann' })).toBe(true);
    expect(await schedules.list({ tenantId: 't1' })).toEqual([]);
    await app.close();
  });
});
