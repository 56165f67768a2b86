import { metrics } from '@opentelemetry/api';
import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { ConfigurationError, currentUserMessage } from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import type { App } from '../../src/app.js';
import { appMetrics } from '../../src/metrics/prometheus-metrics.js';
import { apiKeys } from '../../src/server/auth.js';
import { createApp, echoAgent, failingAgent, postJson, relay } from '../support/app-fixtures.js';
import { parseSamples, type Sample } from '../support/prometheus-text.js';

const KEY = 'sk-scraper-0123456789abcdef0123456789abcdef';

let apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.map((app) => app.close()));
  apps = [];
});

function open(options: Parameters<typeof createApp>[0]): App {
  const { app } = createApp(options);
  apps.push(app);
  return app;
}

/** Relays to the named agent, but fails the turn (the orchestrator throws) on `crash`. */
const relayOrCrash = () => {
  const next = relay();
  return (conversation: Parameters<ReturnType<typeof relay>>[0]) => {
    if (currentUserMessage(conversation).content === 'crash') throw new Error('the router is down');
    return next(conversation);
  };
};

/** The value of the one sample named `name` whose labels include `labels`. */
function sampleValue(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter(
    (sample) =>
      sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
  expect(found, `${name} ${JSON.stringify(labels)}`).toHaveLength(1);
  return (found[0] as Sample).value;
}

async function scrape(app: App, headers: Record<string, string> = {}): Promise<string> {
  const response = await app.request('/metrics', { headers });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
  return response.text();
}

describe('GET /metrics', () => {
  it('counts turns by status and times turns and agent calls, without session ids', async () => {
    const app = open({
      name: 'desk',
      agents: [echoAgent(), failingAgent()],
      handler: relayOrCrash(),
      metrics: true,
    });
    const sessionIds: string[] = [];
    for (const message of ['echo: one', 'echo: two', 'broken: three', 'crash']) {
      const response = await app.request('/v1/chat', postJson({ message }));
      const body = (await response.json()) as { sessionId: string; status: string };
      sessionIds.push(body.sessionId);
      expect(body.status).toBe(message === 'crash' ? 'failed' : 'completed');
    }

    const text = await scrape(app);
    const samples = parseSamples(text);
    const app_ = { app: 'desk', orchestrator: 'scripted' };
    expect(sampleValue(samples, 'switchboard_turns_total', { ...app_, status: 'completed' })).toBe(3);
    expect(sampleValue(samples, 'switchboard_turns_total', { ...app_, status: 'failed' })).toBe(1);
    expect(sampleValue(samples, 'switchboard_turn_duration_seconds_count', { status: 'completed' })).toBe(3);
    expect(sampleValue(samples, 'switchboard_turn_duration_seconds_count', { status: 'failed' })).toBe(1);
    // Every turn ends within the largest bucket.
    expect(
      sampleValue(samples, 'switchboard_turn_duration_seconds_bucket', { status: 'completed', le: '+Inf' }),
    ).toBe(3);
    // A relayed turn decides twice (call the agent, answer); the crashed one once.
    expect(sampleValue(samples, 'switchboard_turn_decisions_sum', { status: 'completed' })).toBe(6);
    expect(sampleValue(samples, 'switchboard_turn_decisions_sum', { status: 'failed' })).toBe(1);
    expect(
      sampleValue(samples, 'switchboard_agent_duration_seconds_count', { agent: 'echo', status: 'ok' }),
    ).toBe(2);
    expect(
      sampleValue(samples, 'switchboard_agent_duration_seconds_count', { agent: 'broken', status: 'error' }),
    ).toBe(1);
    expect(
      sampleValue(samples, 'switchboard_agent_errors_total', { agent: 'broken', error_code: 'agent_error' }),
    ).toBe(1);
    expect(
      samples.some(
        (sample) => sample.name === 'switchboard_agent_errors_total' && sample.labels.agent === 'echo',
      ),
    ).toBe(false);
    expect(sampleValue(samples, 'switchboard_leases_held', app_)).toBe(0);
    for (const sessionId of sessionIds) expect(text).not.toContain(sessionId);
    // Only low-cardinality labels: no session, turn or user ids.
    const labels = new Set(samples.flatMap((sample) => Object.keys(sample.labels)));
    const allowed = ['app', 'orchestrator', 'status', 'agent', 'error_code', 'le', 'otel_scope_name'];
    allowed.push('http_route', 'http_request_method', 'http_response_status_code');
    expect(
      [...labels].filter((label) => !allowed.includes(label) && !/^(service|telemetry)_/.test(label)),
    ).toEqual([]);
  });

  it('counts a turn that pauses for approval, and times it once it ends', async () => {
    const refunds = defineAgent({
      name: 'refunds',
      description: 'Refunds an order',
      requiresApproval: () => ({ required: true, risk: 'high', reason: 'money leaves the company' }),
      run: (message) => `refunded: ${message}`,
    });
    const app = open({ name: 'desk', agents: [refunds], handler: relayOrCrash(), metrics: true });
    const paused = await app.chat({ message: 'refunds: order 7', sessionId: 'paused' });
    expect(paused.status).toBe('awaiting_approval');
    let samples = parseSamples(await scrape(app));
    expect(sampleValue(samples, 'switchboard_turns_total', { status: 'awaiting_approval' })).toBe(1);
    // Counted, not timed: the turn has not ended.
    expect(
      samples.some(
        (sample) => sample.labels.status === 'awaiting_approval' && sample.name.includes('duration'),
      ),
    ).toBe(false);

    const approvalId = paused.approvals?.[0]?.id as string;
    const done = await app.resolveApproval({ sessionId: 'paused', approvalId, decision: 'approve' });
    expect(done.status).toBe('completed');
    samples = parseSamples(await scrape(app));
    expect(sampleValue(samples, 'switchboard_turns_total', { status: 'completed' })).toBe(1);
    expect(sampleValue(samples, 'switchboard_turn_duration_seconds_count', { status: 'completed' })).toBe(1);
  });

  it('counts the leases held while a turn runs', async () => {
    let release!: () => void;
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const waiter = defineAgent({
      name: 'echo',
      description: 'Answers once released',
      run: () =>
        new Promise<string>((resolve) => {
          release = () => resolve('done');
          started();
        }),
    });
    const app = open({ agents: [waiter], metrics: true });
    const turn = app.chat({ message: 'wait for me' });
    await running;
    expect(sampleValue(parseSamples(await scrape(app)), 'switchboard_leases_held')).toBe(1);
    release();
    expect((await turn).status).toBe('completed');
    expect(sampleValue(parseSamples(await scrape(app)), 'switchboard_leases_held')).toBe(0);
  });

  it('is served at metrics.path, and needs a key when auth is on', async () => {
    const auth = apiKeys({ keys: { [KEY]: { tenantId: 'ops', name: 'scraper' } } });
    const app = open({ agents: [echoAgent()], metrics: { path: '/internal/metrics' }, auth });
    const refused = await app.request('/internal/metrics');
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe('Bearer');
    const served = await app.request('/internal/metrics', { headers: { authorization: `Bearer ${KEY}` } });
    expect(served.status).toBe(200);
    expect(await served.text()).toContain('switchboard_leases_held');
    expect((await app.request('/metrics', { headers: { authorization: `Bearer ${KEY}` } })).status).toBe(404);
    expect((await app.request('/internal/metrics', { method: 'POST' })).status).toBe(401);
  });

  it('is off by default', async () => {
    const app = open({ agents: [echoAgent()] });
    expect((await app.request('/v1/chat', postJson({ message: 'hi' }))).status).toBe(200);
    expect((await app.request('/metrics')).status).toBe(404);
  });

  it('records to the global meter provider without the option', async () => {
    const reader = new PrometheusExporter({ preventServerStart: true });
    const provider = new MeterProvider({ readers: [reader] });
    metrics.setGlobalMeterProvider(provider);
    try {
      const app = open({ agents: [echoAgent()] });
      for (const message of ['one', 'two']) expect((await app.chat({ message })).status).toBe('completed');
      const { resourceMetrics } = await reader.collect();
      const samples = parseSamples(new PrometheusSerializer().serialize(resourceMetrics));
      expect(sampleValue(samples, 'switchboard_turns_total', { status: 'completed' })).toBe(2);
      // The global provider's own exporter: OpenTelemetry's names, without the unit suffix.
      expect(sampleValue(samples, 'switchboard_agent_duration_count', { agent: 'echo' })).toBe(2);
    } finally {
      metrics.disable();
      await provider.shutdown();
    }
  });

  it('answers 405 to another method than GET', async () => {
    const app = open({ agents: [echoAgent()], metrics: true });
    const response = await app.request('/metrics', { method: 'POST' });
    expect(response.status).toBe(405);
  });

  it('names the package to install when a metrics package is missing', () => {
    const missing = () => {
      throw new Error('Cannot find module');
    };
    expect(() => appMetrics({}, { load: missing })).toThrow(ConfigurationError);
    expect(() => appMetrics({}, { load: missing })).toThrow(/needs the @opentelemetry\/sdk-metrics package/);
  });

  it('refuses a path inside the API at construction', () => {
    expect(() => open({ agents: [echoAgent()], metrics: { path: '/v1/metrics' } })).toThrow(/metrics\.path/);
  });
});
