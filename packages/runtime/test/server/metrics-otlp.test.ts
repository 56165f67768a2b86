import { StoreUnavailableError } from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { InMemorySessionStore } from '../../src/stores/in-memory-session-store.js';
import { createOtlpReceiver, type OtlpReceiver } from '../../src/testing/otlp-receiver.js';
import { createApp, echoAgent, postJson } from '../support/app-fixtures.js';

let apps: App[] = [];
let receivers: OtlpReceiver[] = [];
afterEach(async () => {
  await Promise.all(apps.map((app) => app.close()));
  await Promise.all(receivers.map((receiver) => receiver.close()));
  apps = [];
  receivers = [];
});

async function receiver(): Promise<OtlpReceiver> {
  const created = await createOtlpReceiver();
  receivers.push(created);
  return created;
}

interface DataPoint {
  attributes?: Array<{ key: string; value: { stringValue?: string } }>;
  asInt?: string | number;
  asDouble?: number;
  count?: string | number;
}

interface Metric {
  name: string;
  sum?: { dataPoints: DataPoint[] };
  histogram?: { dataPoints: DataPoint[] };
}

/** Every metric of the OTLP/HTTP JSON metric exports the receiver got. */
function exportedMetrics(otlp: OtlpReceiver): Metric[] {
  return otlp.requests.flatMap((request) => {
    const body = request.body as {
      resourceMetrics?: Array<{ scopeMetrics: Array<{ metrics: Metric[] }> }>;
    };
    return (body.resourceMetrics ?? []).flatMap((resource) =>
      resource.scopeMetrics.flatMap((scope) => scope.metrics),
    );
  });
}

const statusOf = (point: DataPoint) =>
  point.attributes?.find((attribute) => attribute.key === 'status')?.value.stringValue;

/** The turn counter's value per status, from the last export that carried it (cumulative). */
function turnsByStatus(otlp: OtlpReceiver): Record<string, number> {
  const turns = exportedMetrics(otlp).filter((metric) => metric.name === 'switchboard.turns');
  const last = turns.at(-1);
  return Object.fromEntries(
    (last?.sum?.dataPoints ?? []).map((point) => [statusOf(point), Number(point.asInt ?? point.asDouble)]),
  );
}

describe('metrics over OTLP', () => {
  it('pushes the turn counter and the latency histogram to the configured URL, the last time on close', async () => {
    const otlp = await receiver();
    const { app } = createApp({
      agents: [echoAgent()],
      metrics: { prometheus: false, otlp: { url: `${otlp.url}/v1/metrics`, intervalMs: 3_600_000 } },
    });
    for (const message of ['one', 'two', 'three'])
      expect((await app.chat({ message })).status).toBe('completed');
    // The Prometheus route is off.
    expect((await app.request('/metrics')).status).toBe(404);
    expect(otlp.requests).toHaveLength(0);
    await app.close();

    expect(otlp.requests.map((request) => request.path)).toContain('/v1/metrics');
    expect(turnsByStatus(otlp)).toEqual({ completed: 3 });
    const durations = exportedMetrics(otlp).find((metric) => metric.name === 'switchboard.turn.duration');
    expect(durations?.histogram?.dataPoints.map((point) => Number(point.count))).toEqual([3]);
  });

  it('follows OTEL_EXPORTER_OTLP_ENDPOINT when it is set, beside the Prometheus route', async () => {
    const otlp = await receiver();
    const { app } = createApp({
      agents: [echoAgent()],
      metrics: { env: { OTEL_EXPORTER_OTLP_ENDPOINT: `${otlp.url}/` } },
    });
    expect((await app.chat({ message: 'one' })).status).toBe('completed');
    expect((await app.request('/metrics')).status).toBe(200);
    await app.close();
    expect(otlp.requests.map((request) => request.path)).toEqual(['/v1/metrics']);
    expect(turnsByStatus(otlp)).toEqual({ completed: 1 });
  });

  it('refuses otlp: true with no URL anywhere', () => {
    expect(() => createApp({ agents: [echoAgent()], metrics: { otlp: true, env: {} } })).toThrow(
      /metrics\.otlp needs a URL/,
    );
  });
});

/** An in-memory store whose writes fail once `failing` is set: the store goes down mid-turn. */
class FailingStore extends InMemorySessionStore {
  failing = false;
  override append(...args: Parameters<InMemorySessionStore['append']>) {
    if (this.failing) throw new StoreUnavailableError({ message: 'the store went away' });
    return super.append(...args);
  }
}

describe('metrics of turns that throw', () => {
  it('counts a turn whose store went down with status error', async () => {
    const store = new FailingStore();
    const { app } = createApp({ agents: [echoAgent()], sessionStore: store, metrics: true });
    apps.push(app);
    expect((await app.chat({ message: 'fine' })).status).toBe('completed');
    store.failing = true;
    const response = await app.request('/v1/chat', postJson({ message: 'doomed' }));
    expect(response.status).toBe(503);
    const text = await (await app.request('/metrics')).text();
    expect(text).toMatch(/switchboard_turns_total\{[^}]*status="completed"[^}]*\} 1\b/);
    expect(text).toMatch(/switchboard_turns_total\{[^}]*status="error"[^}]*\} 1\b/);
  });
});
