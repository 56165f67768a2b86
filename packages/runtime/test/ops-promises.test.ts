import { afterEach, describe, expect, it, vi } from 'vitest';
import type { App } from '../src/app.js';
import type { TurnEvent } from '../src/engine/events.js';
import { createOtlpReceiver, type OtlpReceiver } from '../src/testing/otlp-receiver.js';
import {
  createApp,
  echoAgent,
  fanOut,
  parseEventStream,
  postJson,
  slowAgent,
} from './support/app-fixtures.js';
import { leaveCrashedFanOut } from './support/crashed-turn.js';
import { useSpanRecording } from './support/span-recording.js';

let apps: App[] = [];
let receivers: OtlpReceiver[] = [];
afterEach(async () => {
  await Promise.all(apps.map((app) => app.close()));
  await Promise.all(receivers.map((receiver) => receiver.close()));
  apps = [];
  receivers = [];
  vi.unstubAllEnvs();
});

/** Failure guard only: how long a polled condition may take on a loaded machine. */
const WAIT_TIMEOUT_MS = 10_000;

interface DataPoint {
  attributes?: Array<{ key: string; value: { stringValue?: string } }>;
  asInt?: string | number;
  asDouble?: number;
}

interface Metric {
  name: string;
  sum?: { dataPoints: DataPoint[] };
}

/** The metrics of one OTLP/HTTP JSON metrics export. */
function metricsOf(body: unknown): Metric[] {
  const { resourceMetrics = [] } = (body ?? {}) as {
    resourceMetrics?: Array<{ scopeMetrics: Array<{ metrics: Metric[] }> }>;
  };
  return resourceMetrics.flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics));
}

/** The turn counter (Prometheus `switchboard_turns_total`, OTLP `switchboard.turns`) per status, in one export. */
function turnsByStatus(body: unknown): Record<string, number> {
  const turns = metricsOf(body).find((metric) => metric.name === 'switchboard.turns');
  return Object.fromEntries(
    (turns?.sum?.dataPoints ?? []).map((point) => [
      point.attributes?.find((attribute) => attribute.key === 'status')?.value.stringValue,
      Number(point.asInt ?? point.asDouble),
    ]),
  );
}

/** Polls until `until()` holds; fails after {@link WAIT_TIMEOUT_MS} saying what was awaited. */
async function waitUntil(until: () => boolean, what: string): Promise<void> {
  const deadline = performance.now() + WAIT_TIMEOUT_MS;
  while (!until()) {
    if (performance.now() > deadline) throw new Error(`${what} did not happen within ${WAIT_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Exports that counted one completed turn. */
const countingOneTurn = (otlp: OtlpReceiver) =>
  otlp.requests.filter((request) => turnsByStatus(request.body).completed === 1);

describe('metrics pushed over OTLP on the interval the environment sets, while the app runs', () => {
  async function started(env: Record<string, string>) {
    const otlp = await createOtlpReceiver();
    receivers.push(otlp);
    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value.replace('<receiver>', otlp.url));
    // The app reads process.env itself: no metrics option names a URL or an interval.
    const { app } = createApp({ agents: [echoAgent()], metrics: true });
    apps.push(app);
    expect((await app.chat({ message: 'echo: hello' })).status).toBe('completed');
    return { app, otlp };
  }

  it('OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: JSON exports at that exact URL, again and again, before close', async () => {
    const { otlp } = await started({
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: '<receiver>/collector/custom-metrics',
      // The signal's own URL wins over the generic endpoint, as in OpenTelemetry's SDKs.
      OTEL_EXPORTER_OTLP_ENDPOINT: '<receiver>/generic',
      OTEL_METRIC_EXPORT_INTERVAL: '200',
    });
    // Two exports that carry the turn: the push repeats on its own, the app is still open.
    await waitUntil(() => countingOneTurn(otlp).length >= 2, 'two periodic metric exports');
    expect(new Set(otlp.requests.map((request) => `${request.method} ${request.path}`))).toEqual(
      new Set(['POST /collector/custom-metrics']),
    );
    for (const request of otlp.requests) {
      expect(request.headers['content-type']).toContain('application/json');
      expect(request.error).toBeUndefined();
    }
  });

  it('OTEL_EXPORTER_OTLP_ENDPOINT alone: exports at <endpoint>/v1/metrics on the interval', async () => {
    const { otlp } = await started({
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: '',
      OTEL_EXPORTER_OTLP_ENDPOINT: '<receiver>/otlp',
      OTEL_METRIC_EXPORT_INTERVAL: '200',
    });
    await waitUntil(() => countingOneTurn(otlp).length >= 2, 'two periodic metric exports');
    expect(new Set(otlp.requests.map((request) => request.path))).toEqual(new Set(['/otlp/v1/metrics']));
  });

  it('pushes once more on app.close(), with what was counted since the last push', async () => {
    const { app, otlp } = await started({
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: '<receiver>/v1/metrics',
      // Far longer than the test: only close() can push.
      OTEL_METRIC_EXPORT_INTERVAL: '3600000',
    });
    expect((await app.chat({ message: 'echo: again' })).status).toBe('completed');
    expect(otlp.requests).toHaveLength(0);
    await app.close();
    expect(otlp.requests.map((request) => request.path)).toEqual(['/v1/metrics']);
    expect(turnsByStatus(otlp.requests[0]?.body)).toEqual({ completed: 2 });
  });
});

describe('a turn recovered after its replica stopped', () => {
  const recording = useSpanRecording();

  /** An app whose session `crashed` holds a turn its replica left running, with its first traced part. */
  async function crashed() {
    const { app } = createApp({
      name: 'desk',
      agents: [slowAgent('maps', 1), slowAgent('weather', 1)],
      handler: fanOut(['maps', 'weather']),
    });
    apps.push(app);
    // The part the dead replica traced before it stopped (its trace and root span ids).
    const firstPart = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16) };
    await leaveCrashedFanOut(app.sessions, 'crashed', { traces: [firstPart] });
    return { app, firstPart };
  }

  /** The next message on the crashed session, streamed: the events of every `turn-start` on the stream. */
  async function nextMessageStreamed(app: App) {
    const response = await app.request(
      '/v1/chat',
      postJson({ message: 'and tomorrow?', sessionId: 'crashed' }, { accept: 'text/event-stream' }),
    );
    expect(response.status).toBe(200);
    const events = parseEventStream(await response.text()).map(({ data }) => data);
    // One stream, one dialog: only its very last event ends it (not the recovered turn's turn-end).
    expect(events.filter((event) => event.endOfDialog).length).toBe(1);
    expect(events.at(-1)?.endOfDialog).toBe(true);
    // The recovered turn's answer reaches the user on this stream, before the new message's turn starts.
    const firstNewEvent = events.findIndex((event) => event.turnId !== 'turn_crashed');
    expect(
      events
        .slice(0, firstNewEvent)
        .some((event) => event.type === 'message' && event.turnId === 'turn_crashed'),
    ).toBe(true);
    return events.flatMap((data) =>
      data.type === 'turn-start' ? [{ turnId: data.turnId, resumed: data.resumed }] : [],
    );
  }

  it("streams the recovered turn's turn-start with resumed: 'recovery' before the new message's turn", async () => {
    const { app } = await crashed();
    const starts = await nextMessageStreamed(app);
    // docs/guides/streaming.md: "When a stored turn continues (after its approvals, or after a crash), its
    // `turn-start` has `resumed: 'approval'` or `'recovery'`."
    expect(starts).toEqual([
      { turnId: 'turn_crashed', resumed: 'recovery' },
      { turnId: expect.not.stringMatching(/^turn_crashed$/), resumed: undefined },
    ]);
  });

  it("gives app.chat the recovered turn's events first when asked (streamEarlierTurn), as the streaming guide says", async () => {
    const { app } = await crashed();
    const events: TurnEvent[] = [];
    const result = await app.chat({
      sessionId: 'crashed',
      message: 'and tomorrow?',
      streamEarlierTurn: true,
      onEvent: (event) => events.push(event),
    });
    expect(result.status).toBe('completed');
    const starts = events.filter((event) => event.type === 'turn-start');
    expect(starts.map((event) => [event.turnId, event.type === 'turn-start' && event.resumed])).toEqual([
      ['turn_crashed', 'recovery'],
      [result.turnId, undefined],
    ]);
    const ends = events.filter((event) => event.type === 'turn-end');
    expect(ends.map((event) => [event.turnId, event.endOfDialog])).toEqual([
      ['turn_crashed', false],
      [result.turnId, true],
    ]);
  });

  it("keeps the recovered turn's events out of streams that make one reply: app.chat's onEvent and the OpenAI-compatible API", async () => {
    const { app } = await crashed();
    const events: TurnEvent[] = [];
    const result = await app.chat({
      sessionId: 'crashed',
      message: 'and tomorrow?',
      onEvent: (event) => events.push(event),
    });
    expect(result.status).toBe('completed');
    expect(new Set(events.map((event) => event.turnId))).toEqual(new Set([result.turnId]));

    const second = await crashed();
    const response = await second.app.request(
      '/v1/chat/completions',
      postJson(
        { model: 'scripted', stream: true, messages: [{ role: 'user', content: 'and tomorrow?' }] },
        { 'x-session-id': 'crashed' },
      ),
    );
    const text = await response.text();
    expect(response.status, text).toBe(200);
    // The completion streams the new message's answer only: the recovered turn's (about the hike) is not in it.
    expect(text).toContain('and tomorrow?');
    expect(text).not.toContain('plan a hike');
  });

  it("traces the recovered part as '<app> recovery', a new trace linked to its first part", async () => {
    const { app, firstPart } = await crashed();
    await nextMessageStreamed(app);

    const parts = recording().named('scripted');
    expect(parts).toHaveLength(2);
    const [recovered, ownTurn] = parts as [(typeof parts)[0], (typeof parts)[0]];
    // docs/guides/tracing-langfuse.md: "a turn resumed after an approval or a crash is a new trace named `support approval` or
    // `support recovery`, linked to the earlier part".
    expect(recovered.attributes['langfuse.trace.name']).toBe('desk recovery');
    expect(recovered.attributes).toMatchObject({
      'session.id': 'crashed',
      'switchboard.turn.resumed': 'recovery',
      'switchboard.turn.status': 'completed',
    });
    expect(recovered.parentSpanContext).toBeUndefined();
    expect(recovered.spanContext().traceId).not.toBe(firstPart.traceId);
    expect(recovered.links.map((link) => link.context.traceId)).toEqual([firstPart.traceId]);
    // The new message's own turn is a trace of its own, named after its entry point.
    expect(ownTurn.attributes['langfuse.trace.name']).toBe('desk /v1/chat');
    expect(ownTurn.spanContext().traceId).not.toBe(recovered.spanContext().traceId);

    // The stored turn keeps both parts and counts the recovery.
    const [stored] = await app.sessions.listTurns('crashed');
    expect(stored).toMatchObject({ turnId: 'turn_crashed', status: 'completed', recoveries: 1 });
    expect(stored!.traces?.map((part) => part.traceId)).toEqual([
      firstPart.traceId,
      recovered.spanContext().traceId,
    ]);
  });
});
