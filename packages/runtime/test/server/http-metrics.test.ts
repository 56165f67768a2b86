import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import type { App } from '../../src/app.js';
import { createApp, echoAgent, failingAgent, postJson, relay } from '../support/app-fixtures.js';
import { expositionProblems, parseSamples, promtoolCheck, type Sample } from '../support/prometheus-text.js';

/** An agent that runs until its turn is stopped; `running` resolves with the turn's id once it runs. */
function waitingAgent() {
  let started!: (turnId: string) => void;
  const running = new Promise<string>((resolve) => {
    started = resolve;
  });
  const agent = defineAgent({
    name: 'wait',
    description: 'Waits until stopped',
    run: (_message, context) =>
      new Promise<string>((_resolve, reject) => {
        context.signal.addEventListener('abort', () => reject(context.signal.reason));
        started(context.conversation.turnId);
      }),
  });
  return { agent, running };
}

function count(samples: readonly Sample[], name: string, labels: Record<string, string>): number {
  const found = samples.filter(
    (sample) =>
      sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
  return found.reduce((sum, sample) => sum + sample.value, 0);
}

describe('request and interruption metrics', () => {
  let app: App;
  let text: string;
  let samples: Sample[];

  beforeAll(async () => {
    const { agent, running } = waitingAgent();
    ({ app } = createApp({
      name: 'desk',
      agents: [agent, echoAgent()],
      handler: relay(),
      concurrency: 'reject',
      metrics: { serviceVersion: '1.4.2', env: {} },
    }));
    const first = app.request('/v1/chat', postJson({ message: 'wait: for me', sessionId: 'busy' }));
    const turnId = await running;
    const busy = await app.request('/v1/chat', postJson({ message: 'echo: me too', sessionId: 'busy' }));
    expect(busy.status).toBe(409);
    expect((await app.cancelTurn({ sessionId: 'busy', turnId })).status).toBe('interrupted');
    expect(((await (await first).json()) as { status: string }).status).toBe('interrupted');
    expect(
      (await app.request('/v1/chat', postJson({ message: 'echo: after', sessionId: 'busy' }))).status,
    ).toBe(200);
    expect((await app.request('/v1/chat', postJson({ nothing: true }))).status).toBe(400);
    const unknownModel = await app.request(
      '/v1/chat/completions',
      postJson({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(unknownModel.status).toBe(404);
    expect((await app.request('/v1/sessions/nobody')).status).toBe(404);
    const scraped = await app.request('/metrics');
    text = await scraped.text();
    samples = parseSamples(text);
  });
  afterAll(() => app.close());

  it('times every answer by route template, method and status code, rejections included', () => {
    const requests = (route: string, status: number, method = 'POST') =>
      count(samples, 'http_server_request_duration_seconds_count', {
        http_route: route,
        http_request_method: method,
        http_response_status_code: String(status),
      });
    expect(requests('/v1/chat', 200)).toBe(2);
    expect(requests('/v1/chat', 409)).toBe(1);
    expect(requests('/v1/chat', 400)).toBe(1);
    expect(requests('/v1/chat/completions', 404)).toBe(1);
    // The template, never the id: no session id reaches a label.
    expect(requests('/v1/sessions/:id', 404, 'GET')).toBe(1);
    expect(text).not.toContain('nobody');
    expect(text).toContain('# TYPE http_server_request_duration_seconds histogram');
  });

  it('counts an interrupted turn and its stopped call apart from agent errors', () => {
    expect(count(samples, 'switchboard_turns_total', { status: 'interrupted' })).toBe(1);
    expect(count(samples, 'switchboard_turns_total', { status: 'failed' })).toBe(0);
    expect(
      count(samples, 'switchboard_agent_duration_seconds_count', { agent: 'wait', status: 'cancelled' }),
    ).toBe(1);
    expect(
      count(samples, 'switchboard_agent_duration_seconds_count', { agent: 'wait', status: 'error' }),
    ).toBe(0);
    expect(samples.filter((sample) => sample.name === 'switchboard_agent_errors_total')).toEqual([]);
  });

  it('names the service after the app, with its version, in target_info', () => {
    const [info] = samples.filter((sample) => sample.name === 'target_info');
    expect(info?.labels).toMatchObject({ service_name: 'desk', service_version: '1.4.2' });
    expect(text).not.toContain('unknown_service');
  });

  it('has every duration in seconds, with _seconds names', () => {
    const durations = new Set(
      samples
        .filter((sample) => sample.name.includes('duration'))
        .map((sample) => sample.name.replace(/_(bucket|sum|count)$/, '')),
    );
    expect([...durations].sort()).toEqual([
      'http_server_request_duration_seconds',
      'switchboard_agent_duration_seconds',
      'switchboard_turn_duration_seconds',
    ]);
  });

  it('is a valid exposition: promtool check metrics when promtool is on the PATH, and a strict parse always', () => {
    expect(expositionProblems(text)).toEqual([]);
    const promtool = promtoolCheck(text);
    if (promtool) expect(promtool, promtool.output).toMatchObject({ status: 0, output: '' });
  });

  it('the strict parse catches what promtool would', () => {
    expect(expositionProblems('# TYPE requests counter\nrequests 1\n')).toEqual([
      'requests: counter without _total',
    ]);
    expect(
      expositionProblems('# TYPE t histogram\nt_bucket{le="1"} 2\nt_bucket{le="+Inf"} 1\nt_count 1\n'),
    ).toEqual(['t{}: buckets not ascending and cumulative']);
    expect(expositionProblems('latency 1\n')).toEqual(['latency: sample before its TYPE']);
    expect(expositionProblems('# TYPE x gauge\nx{a="b} 1\n')).toEqual(['malformed line: x{a="b} 1']);
  });
});

describe('deploy/grafana-dashboard.json', () => {
  it('queries only metrics the server exposes and the metrics guide lists', async () => {
    const root = new URL('../../../../', import.meta.url);
    const dashboard = JSON.parse(await readFile(new URL('deploy/grafana-dashboard.json', root), 'utf8')) as {
      panels: { targets: { expr: string }[] }[];
    };
    const guide = await readFile(new URL('docs/guides/metrics-and-logs.md', root), 'utf8');
    const queried = new Set(
      dashboard.panels.flatMap((panel) =>
        panel.targets.flatMap((target) =>
          [...target.expr.matchAll(/\b(http_server_\w+|switchboard_\w+)\{/g)].map(
            (match) => match[1] as string,
          ),
        ),
      ),
    );
    expect(queried.size).toBeGreaterThanOrEqual(6);
    const { app } = createApp({
      name: 'desk',
      agents: [echoAgent(), failingAgent()],
      handler: relay(),
      metrics: { env: {} },
    });
    try {
      for (const message of ['echo: hi', 'broken: now'])
        expect((await app.request('/v1/chat', postJson({ message }))).status).toBe(200);
      const families = new Set(
        parseSamples(await (await app.request('/metrics')).text()).map((sample) => sample.name),
      );
      for (const series of queried) {
        expect(families, series).toContain(series);
        expect(guide, series).toContain(`\`${series.replace(/_(bucket|sum|count)$/, '')}\``);
      }
    } finally {
      await app.close();
    }
  });
});
